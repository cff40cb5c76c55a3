import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { KeySpace } from '@codemode/events';
import { TenantQuotaLedger } from '@codemode/fleet';
import { measureCounters, type CounterCost } from './redis-counters';
import { fmt } from './stats';

/** One way of admitting an exec (request token + in-flight slot) and releasing its slot, per call. */
export interface AdmissionCost {
  name: string;
  /** The round of median Redis CPU. */
  counters: CounterCost;
  /** Lowest and highest Redis CPU µs per call over the rounds. */
  cpuRange: [number, number];
}

const ROUNDS = 5;
const IDLE_MS = 500;
/** Limits no call reaches: every admission here is taken. */
const OPEN = { rate: 1e9, burst: 1e9, tokens: 1 };
const LEASE_MS = 30_000;

/**
 * Plan (g) 3 for issue 40: `admit-call.lua` (token and slot in one script) against the two round
 * trips the API made before (the rate guard's token, then `take-lease-slot.lua`), each followed by
 * the slot's release (ZREM) as after an exec's answer. The token alone is `admit-call.lua` without
 * a slot, the commands of the old `take-request-token.lua` (TIME, HMGET, HSET, PEXPIRE). Variants
 * take turns, ROUNDS times, on a Redis nothing else uses.
 */
export async function measureAdmission(redisUrl: string, calls: number): Promise<AdmissionCost[]> {
  const redis = new Redis(redisUrl);
  const client = new Redis(redisUrl);
  const prefix = `adm${randomUUID().slice(0, 8)}`;
  const ledger = new TenantQuotaLedger(client, new KeySpace(prefix));
  const slot = () => ({ holder: randomUUID(), max: 1e9, leaseMs: LEASE_MS });
  const variants: { name: string; call: () => Promise<void> }[] = [
    {
      name: 'two round trips (before): token (rate guard), then take-lease-slot.lua; ZREM',
      call: async () => {
        await ledger.admitCall('bench', OPEN, null);
        const holder = randomUUID();
        await ledger.takeSlot('bench', 'inflight', holder, 1e9, LEASE_MS);
        await ledger.releaseSlot('bench', 'inflight', holder);
      },
    },
    {
      name: 'one round trip (now): admit-call.lua with token and slot; ZREM',
      call: async () => {
        const taken = slot();
        await ledger.admitCall('bench', OPEN, taken);
        await ledger.releaseSlot('bench', 'inflight', taken.holder);
      },
    },
  ];
  try {
    for (const { call } of variants) for (let i = 0; i < 100; i += 1) await call();
    const rounds = variants.map((): CounterCost[] => []);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [i, { call }] of variants.entries()) rounds[i].push(await measureCounters(calls, call, redis, { idleMs: IDLE_MS }));
    }
    return variants.map(({ name }, i) => {
      const byCpu = [...rounds[i]].sort((x, y) => x.cpuUs - y.cpuUs);
      return { name, counters: byCpu[Math.floor(byCpu.length / 2)], cpuRange: [byCpu[0].cpuUs, byCpu[byCpu.length - 1].cpuUs] };
    });
  } finally {
    const stale = await redis.keys(`${prefix}:*`);
    if (stale.length > 0) await redis.del(...stale);
    client.disconnect();
    redis.disconnect();
  }
}

export function admissionTable(costs: AdmissionCost[], calls: number): string {
  return [
    `| per exec admission and release (${ROUNDS} rounds of ${calls}, variants in turn; the median round) | Redis CPU µs (less idle; raw) | socket reads | commands (script-inner included) |`,
    '|---|---|---|---|',
    ...costs.map(
      ({ name, counters: c, cpuRange }) =>
        `| ${name} | ${fmt(c.cpuUs, 1)}; ${fmt(c.rawCpuUs, 1)} (rounds ${fmt(cpuRange[0], 0)}–${fmt(cpuRange[1], 0)}) | ${fmt(c.socketReads, 2)} | ${fmt(c.commands, 1)} |`,
    ),
  ].join('\n');
}

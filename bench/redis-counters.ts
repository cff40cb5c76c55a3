import type { Redis } from 'ioredis';
import { RedisConnections, segmentsByRole, type NamedProcess } from './redis-connections';

/**
 * What one operation cost one Redis, from its INFO counters. Only meaningful on a Redis nothing
 * else uses (a `PrivateRedis`): INFO counts every client's work.
 */
export interface CounterCost {
  ops: number;
  /** Redis CPU (used_cpu_user + used_cpu_sys) per op, µs, less what Redis spent idle over as long. */
  cpuUs: number;
  /** The same without taking the idle CPU off. */
  rawCpuUs: number;
  /**
   * Socket reads Redis served per op (`total_reads_processed`), less the bench's own and less
   * the idle rate: one per batch of commands a client wrote that Redis read at once, however many
   * commands it held. This is a round trip in the sense of SPEC §13.
   */
  socketReads: number;
  /** The same without taking the idle reads off. */
  rawSocketReads: number;
  /** Commands Redis ran per op, the commands inside scripts included (`INFO commandstats`), less idle. */
  commands: number;
  /** The same by command name (lower case, `fcall` and `evalsha` themselves included), largest first. */
  commandsByName: { name: string; calls: number }[];
  /**
   * Per process (by role), TCP data segments its connections sent to Redis per op, less idle: its
   * socket writes, an upper bound on the socket reads Redis served it (see RedisConnections).
   */
  segmentsByRole: { role: string; segments: number }[];
  /** How long the ops took, ms, and how long the idle window was. */
  tookMs: number;
  idleMs: number;
}

interface Snapshot {
  at: number;
  cpuUs: number;
  reads: number;
  calls: number;
  /** Calls by command name. */
  byName: Map<string, number>;
  segments: Map<number, number>;
}

/**
 * Runs `ops` sequential ops and reads Redis's counters around them, after an idle window of
 * `idleMs` read the same way (the fleet's timers, BullMQ's blocking pops and stalled checks,
 * lease renewals: work Redis does per second, not per op). The measuring connection sends one
 * INFO per snapshot and nothing else, so the bench's own share is exact: one read and one
 * command per snapshot interval.
 */
export async function measureCounters(
  ops: number,
  op: () => Promise<unknown>,
  redis: Redis,
  opts: { idleMs: number; port?: number; processes?: NamedProcess[] },
): Promise<CounterCost> {
  const connections = opts.port === undefined ? null : new RedisConnections(opts.port, opts.processes ?? []);
  const idleFrom = await snapshot(redis, connections);
  await new Promise((resolve) => setTimeout(resolve, opts.idleMs));
  const from = await snapshot(redis, connections);
  for (let i = 0; i < ops; i += 1) await op();
  const to = await snapshot(redis, connections);
  const owners = connections?.owners() ?? new Map<number, string>();
  const idleMs = from.at - idleFrom.at;
  const tookMs = to.at - from.at;
  // Idle work over the ops' duration, in the unit of each counter.
  const idleShare = tookMs / idleMs;
  const less = (pick: (s: Snapshot) => number, own: number): { net: number; raw: number } => {
    const raw = pick(to) - pick(from) - own;
    const idle = (pick(from) - pick(idleFrom) - own) * idleShare;
    return { net: Math.max(0, raw - idle) / ops, raw: raw / ops };
  };
  const cpu = less((s) => s.cpuUs, 0);
  const reads = less((s) => s.reads, 1);
  const calls = less((s) => s.calls, 1);
  const commandsByName = [...to.byName.keys()]
    .map((name) => ({ name, calls: less((s) => s.byName.get(name) ?? 0, name === 'info' ? 1 : 0).net }))
    .filter((c) => c.calls >= 0.005)
    .sort((a, b) => b.calls - a.calls);
  const idleSegments = segmentsByRole(idleFrom.segments, from.segments, owners);
  const busySegments = segmentsByRole(from.segments, to.segments, owners);
  return {
    ops,
    cpuUs: cpu.net,
    rawCpuUs: cpu.raw,
    socketReads: reads.net,
    rawSocketReads: reads.raw,
    commands: calls.net,
    commandsByName,
    segmentsByRole: [...busySegments]
      .map(([role, segments]) => ({ role, segments: Math.max(0, segments - (idleSegments.get(role) ?? 0) * idleShare) / ops }))
      .sort((a, b) => a.role.localeCompare(b.role)),
    tookMs,
    idleMs,
  };
}

async function snapshot(redis: Redis, connections: RedisConnections | null): Promise<Snapshot> {
  // One INFO for all three sections: one read and one command per snapshot.
  const text = (await redis.call('INFO', 'cpu', 'stats', 'commandstats')) as string;
  const at = performance.now();
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  let calls = 0;
  const byName = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls += Number(m[2]);
    byName.set(m[1], Number(m[2]));
  }
  const reads = field('total_reads_processed');
  if (!Number.isFinite(reads)) throw new Error('this Redis has no total_reads_processed in INFO stats');
  return {
    at,
    cpuUs: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6,
    reads,
    calls,
    byName,
    segments: connections?.segments() ?? new Map<number, number>(),
  };
}

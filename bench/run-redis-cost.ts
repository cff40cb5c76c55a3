import { Redis } from 'ioredis';
import { CodeModeClient } from '@codemode/client';
import { PrivateRedis } from '../test/utils/private-redis';
import { measureRedisCost, redisCostTable } from './redis-cost';
import { measureCounters, type CounterCost } from './redis-counters';
import { allKeysBytes, retainedByKind } from './retained-bytes';
import { startMultiTenantStack } from './scale-out';
import { fmt } from './stats';
import { measureStreamPrimitives, streamPrimitivesTable } from './stream-primitives';
import { admissionTable, measureAdmission } from './admission-scripts';

const EXECS = Number(process.env.BENCH_REDIS_COST_EXECS ?? 200);
const PRIMITIVE_CELLS = Number(process.env.BENCH_STREAM_PRIMITIVE_CELLS ?? 500);
const ADMISSION_CALLS = Number(process.env.BENCH_ADMISSION_CALLS ?? 2000);
const WARM_EXECS = 50;
/** Execs of one session kept running at once: most of the log between a run's request and its end is other runs' (fold-run.lua). */
const CROWDED_EXECS = Number(process.env.BENCH_REDIS_CROWDED_EXECS ?? 1000);
const CROWDED_IN_FLIGHT = 64;
/** How new cells travel (`CODEMODE_CELL_DISPATCH`, passed to the stack's apps by TestStack). */
const CELL_DISPATCH = process.env.CODEMODE_CELL_DISPATCH?.trim() || 'stream';
/** How long Redis's idle work (timers, blocking pops, renewals) is read for before the execs. */
const IDLE_MS = 5_000;

/**
 * `npm run bench:redis`: what one trivial exec costs Redis (issue 40's measures), on a private
 * Redis nothing else uses so that INFO's counters are the exec's own: one api and one worker,
 * multi-tenant with quotas on, `return 1+1` one at a time in one session, then 64 at a time in
 * another (Redis time by script, and the bytes kept once they are done). Then the stream
 * primitives against BullMQ (bench/stream-primitives.ts) and the exec admission in one script
 * against two (bench/admission-scripts.ts) on the same Redis, the apps stopped. With
 * `CODEMODE_CELL_DISPATCH=bullmq` in its environment, the apps dispatch new cells as BullMQ jobs.
 */
async function main(): Promise<void> {
  const redis = await PrivateRedis.start();
  try {
    const stack = await startMultiTenantStack({ redisUrl: redis.url });
    const node = new Redis(redis.url);
    try {
      const client = new CodeModeClient({ baseUrl: stack.baseUrl, apiKey: 'key-alpha' });
      const execIn = (session: string) => async (): Promise<unknown> => {
        const result = await client.exec(session, { title: 'add', code: 'return 1+1' });
        if (result.status !== 'completed' || result.value !== 2) throw new Error(`unexpected result ${JSON.stringify(result)}`);
        return result;
      };
      const execCell = execIn('bench');
      for (let i = 0; i < WARM_EXECS; i += 1) await execCell();
      const processes = [
        { role: 'api', pid: stack.api.pid },
        { role: 'worker', pid: stack.workers[0].pid },
        { role: 'bench', pid: process.pid },
      ];
      const counters = await measureCounters(EXECS, execCell, node, { idleMs: IDLE_MS, port: redis.port, processes });
      const profile = await measureRedisCost(EXECS, execCell, redis.url, processes.slice(0, 2));
      const retained = await retainedByKind(node, stack.prefix, WARM_EXECS + 2 * EXECS);
      const crowded = await measureRedisCost(CROWDED_EXECS, execIn('bench-crowded'), redis.url, processes.slice(0, 2), CROWDED_IN_FLIGHT);
      const keptAfter = await retainedByKind(node, stack.prefix, WARM_EXECS + 2 * EXECS + CROWDED_EXECS);
      const kept = [
        '| after them, what the Redis keeps per finished run (MEMORY USAGE of every key; these runs and the ones before) | bytes |',
        '|---|---|',
        `| all keys | ${fmt(allKeysBytes(keptAfter), 0)} |`,
      ].join('\n');
      process.stdout.write(
        `${execCostTable(counters, retained)}\n\n${redisCostTable(profile, ', multi-tenant, quotas on, private Redis')}\n\n` +
          `${redisCostTable(crowded, ' in one session, multi-tenant, quotas on, private Redis')}\n\n${kept}\n\n`,
      );
    } finally {
      node.disconnect();
      await stack.stop();
    }
    process.stdout.write(`${streamPrimitivesTable(await measureStreamPrimitives(redis.url, PRIMITIVE_CELLS))}\n\n`);
    process.stdout.write(`${admissionTable(await measureAdmission(redis.url, ADMISSION_CALLS), ADMISSION_CALLS)}\n`);
  } finally {
    await redis.cleanup();
  }
}

function execCostTable(c: CounterCost, retained: { kind: string; bytes: number }[]): string {
  const segments = c.segmentsByRole.map((s) => `${s.role} ${fmt(s.segments, 1)}`).join(', ');
  return [
    `| per exec \`return 1+1\` (${c.ops} sequential, one session, multi-tenant, quotas on, private Redis, cell dispatch ${CELL_DISPATCH}) | value | what it counts |`,
    '|---|---|---|',
    `| Redis CPU µs (less idle; raw) | ${fmt(c.cpuUs, 0)}; ${fmt(c.rawCpuUs, 0)} | INFO used_cpu_user + used_cpu_sys delta; idle rate read over ${fmt(c.idleMs / 1000, 1)} s before, taken off for the ${fmt(c.tookMs / 1000, 1)} s of execs |`,
    `| socket reads (less idle; raw) | ${fmt(c.socketReads, 1)}; ${fmt(c.rawSocketReads, 1)} | INFO total_reads_processed delta less the bench's own INFO: one per batch Redis read from a client, however many commands it held (round trips) |`,
    `| socket writes to Redis by process (less idle) | ${segments} | TCP data segments each process's connections sent (ss data_segs_in on Redis's side): an upper bound on its socket reads |`,
    `| commands, script-inner included (less idle) | ${fmt(c.commands, 1)} | INFO commandstats calls delta less the bench's own INFO |`,
    ...retained.map((r) => `| bytes kept: ${r.kind} | ${fmt(r.bytes, 0)} | MEMORY USAGE of each key, divided by the finished runs |`),
    `| **bytes kept per finished run, all keys** | ${fmt(allKeysBytes(retained), 0)} | |`,
  ].join('\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});

import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { measureCounters, type CounterCost } from './redis-counters';
import { measureRedisCost, type RedisCostReport } from './redis-cost';
import { fmt, percentile } from './stats';

/** One way of handing a cell from the API to a worker and back, measured per cell. */
export interface DispatchCost {
  name: string;
  /** The round of median Redis CPU. */
  counters: CounterCost;
  /** Lowest and highest Redis CPU µs per cell over the rounds. */
  cpuRange: [number, number];
  profile: RedisCostReport;
}

/** Per-call Redis CPU of the parts every script call pays, from a probe (plan (g) 1). */
export interface CallFloors {
  /** µs per socket read and its reply (the batch's own cost, whatever it holds). */
  perSocketReadUs: number;
  /** µs per script call beyond its read and its inner commands. */
  perScriptUs: number;
  /** µs per inner command (an HSET of a small hash). */
  perInnerCommandUs: number;
  /** The probe's four points: µs per call at (inner commands, calls per write). */
  points: { inner: number; depth: number; us: number }[];
}

export interface StreamPrimitivesReport {
  /** Cells per variant and round. */
  cells: number;
  rounds: number;
  dispatch: DispatchCost[];
  floors: CallFloors;
}

const SHARD = 'cells-0';
const GROUP = 'cells';
const IDLE_MS = 2_000;
const DISPATCH_ROUNDS = 3;
const FLOOR_ROUNDS = 5;
const FLOOR_CALLS = 5_000;
/** The probe's Redis has no other client: its idle work is the server cron alone. */
const FLOOR_IDLE_MS = 500;
/** A cell job's data as `CellQueue.add` sends it: the whole spec rides in the job (~600 B). */
const JOB_DATA = {
  tenant: 'alpha',
  sessionId: 'bench-session',
  spec: {
    title: 'add',
    code: 'return 1+1',
    limits: { timeoutMs: 30_000, memoryBytes: 67_108_864, stackBytes: 1_048_576, maxOutputBytes: 1_048_576, maxToolCalls: 1000 },
    shell: { enabled: false, network: 'none', timeoutMs: 60_000, maxOutputBytes: 1_048_576, env: {} },
    agentId: null,
    agents: false,
  },
  replyTo: 'cm:reply:{alpha:bench-session}:api-0f3c9a6e-6b7d-4c1e-9a55-2f0d1c3b4a5e',
  requestedAt: 0,
};

/**
 * Plan (g) 1 and 3 for issue 40 (docs/plans/log-dispatched-cells.md): what handing one cell to a
 * worker costs Redis, for the stream primitives the new path would use and for one BullMQ job as
 * `CellQueue` and the worker's `QueueConsumer` use it today, one cell at a time with the consumer
 * already waiting (as an idle worker is). Neither includes the run's own scripts
 * (`request-run`, `start-run`, `finish-run`): only the dispatch, fetch and completion. Run on a
 * Redis nothing else uses (INFO counts every client).
 */
export async function measureStreamPrimitives(redisUrl: string, cells: number): Promise<StreamPrimitivesReport> {
  const redis = new Redis(redisUrl);
  const prefix = `sp${randomUUID().slice(0, 8)}`;
  const paths: { name: string; path: CellPath }[] = [];
  try {
    paths.push(
      {
        name: 'stream: XADD + ZADD → XREADGROUP (blocked, 2 streams) → XACK + XDEL + ZADD XX, pipelined',
        path: await streamPath(redisUrl, `${prefix}a`, 'plain'),
      },
      {
        name: 'stream: the same, XACK + XDEL + ZADD XX in one script (ack-cell.lua)',
        path: await streamPath(redisUrl, `${prefix}b`, 'script'),
      },
      {
        name: 'BullMQ today: Queue.add (prioritized) → Worker fetch → completion (removeOnComplete)',
        path: await bullmqPath(redisUrl, `${prefix}c`),
      },
    );
    for (const { path } of paths) for (let i = 0; i < 50; i += 1) await path.cell();
    // The variants take turns, DISPATCH_ROUNDS times; each keeps its round of median CPU.
    const rounds = paths.map((): CounterCost[] => []);
    for (let round = 0; round < DISPATCH_ROUNDS; round += 1) {
      for (const [i, { path }] of paths.entries()) rounds[i].push(await measureCounters(cells, path.cell, redis, { idleMs: IDLE_MS }));
    }
    const dispatch: DispatchCost[] = [];
    for (const [i, { name, path }] of paths.entries()) {
      const byCpu = [...rounds[i]].sort((x, y) => x.cpuUs - y.cpuUs);
      const counters = byCpu[Math.floor(byCpu.length / 2)];
      dispatch.push({
        name,
        counters,
        cpuRange: [byCpu[0].cpuUs, byCpu[byCpu.length - 1].cpuUs],
        profile: await measureRedisCost(cells, path.cell, redisUrl),
      });
    }
    return { cells, rounds: DISPATCH_ROUNDS, dispatch, floors: await measureFloors(redis, redisUrl, `${prefix}f`) };
  } finally {
    for (const { path } of paths) await path.close();
    redis.disconnect();
  }
}

interface CellPath {
  cell: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * The new path's commands for one cell (plan (b)): the API writes the entry and the live-index
 * entry in one socket write; the worker, blocked in XREADGROUP on the shard's two lanes, gets it;
 * the worker acknowledges it in the write of the run's end (here alone).
 */
async function streamPath(redisUrl: string, prefix: string, ack: 'plain' | 'script'): Promise<CellPath> {
  const api = new Redis(redisUrl);
  const worker = new Redis(redisUrl);
  const first = `{${prefix}:${SHARD}}:stream:first`;
  const rest = `{${prefix}:${SHARD}}:stream:rest`;
  const live = `{${prefix}:${SHARD}}:live`;
  for (const key of [first, rest]) await api.xgroup('CREATE', key, GROUP, '0', 'MKSTREAM');
  const ackScript =
    "redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) redis.call('XDEL', KEYS[1], ARGV[2]) redis.call('ZADD', KEYS[2], 'XX', ARGV[3], ARGV[4]) return 1";
  const ackSha = (await api.script('LOAD', ackScript)) as string;
  const cell = async (): Promise<void> => {
    const runId = `cm_${randomUUID()}`;
    const read = worker.xreadgroup('GROUP', GROUP, 'worker-1', 'COUNT', 1, 'BLOCK', 5000, 'STREAMS', first, rest, '>', '>');
    // Let the read reach Redis and block first, as an idle worker's has.
    await new Promise((resolve) => setTimeout(resolve, 2));
    const due = Date.now() + 40_000;
    const batch = api.pipeline();
    batch.xadd(rest, '*', 'r', runId, 't', JOB_DATA.tenant, 's', JOB_DATA.sessionId, 'a', 'api-0f3c9a6e', 'h', randomUUID());
    batch.zadd(live, due, `${JOB_DATA.tenant}:${JOB_DATA.sessionId}:${runId}`);
    await batch.exec();
    const entries = (await read) as [string, [string, string[]][]][] | null;
    const id = entries?.[0]?.[1]?.[0]?.[0];
    if (id === undefined) throw new Error('XREADGROUP returned no entry');
    const member = `${JOB_DATA.tenant}:${JOB_DATA.sessionId}:${runId}`;
    if (ack === 'plain') {
      const end = worker.pipeline();
      end.xack(rest, GROUP, id);
      end.xdel(rest, id);
      end.zadd(live, 'XX', due + 10_000, member);
      await end.exec();
    } else {
      await worker.evalsha(ackSha, 2, rest, live, GROUP, id, String(due + 10_000), member);
    }
  };
  return {
    cell,
    close: async () => {
      await api.del(first, rest, live);
      api.disconnect();
      worker.disconnect();
    },
  };
}

/** One cell as today: `CellQueue.add`'s options, a worker with `QueueConsumer`'s settings, a no-op handler. */
async function bullmqPath(redisUrl: string, prefix: string): Promise<CellPath> {
  const producer = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const consumer = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(SHARD, { connection: producer, prefix: `{${prefix}:${SHARD}}` });
  const worker = new Worker(SHARD, async () => undefined, {
    connection: consumer,
    prefix: `{${prefix}:${SHARD}}`,
    // The worker's defaults: 2 sandbox threads × cells per thread, a 10 s lease.
    concurrency: 4,
    maxStalledCount: 2,
    lockDuration: 10_000,
    stalledInterval: 5_000,
  });
  await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
  const cell = async (): Promise<void> => {
    const runId = `cm_${randomUUID()}`;
    const done = new Promise<void>((resolve) => {
      const onCompleted = (job: { id?: string }): void => {
        if (job.id !== runId) return;
        worker.off('completed', onCompleted);
        resolve();
      };
      worker.on('completed', onCompleted);
    });
    await queue.add(
      'run-cell',
      { ...JOB_DATA, runId },
      { jobId: runId, priority: 1, removeOnComplete: true, removeOnFail: true, attempts: 1 },
    );
    await done;
  };
  return {
    cell,
    close: async () => {
      await worker.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      producer.disconnect();
      consumer.disconnect();
    },
  };
}

/**
 * Plan (g) 1's probe: script calls of 1 or 21 inner commands (HSET of a small hash), one per
 * socket write or 10 per write. Per call: read/depth + script + inner·k, so the differences give
 * each part. The four points are taken in turn, FLOOR_ROUNDS times, and each point's median kept:
 * on shared cores one point alone swings by 2×.
 */
async function measureFloors(redis: Redis, redisUrl: string, prefix: string): Promise<CallFloors> {
  const client = new Redis(redisUrl);
  const key = `${prefix}:probe`;
  const body = (inner: number): string => `for i = 1, ${inner} do redis.call('HSET', KEYS[1], 'f' .. i, ARGV[1]) end return 1`;
  const samples = new Map<string, number[]>();
  try {
    const shas = new Map<number, string>();
    for (const inner of [1, 21]) shas.set(inner, (await client.script('LOAD', body(inner))) as string);
    for (let round = 0; round < FLOOR_ROUNDS; round += 1) {
      for (const inner of [1, 21]) {
        for (const depth of [1, 10]) {
          const op = async (): Promise<void> => {
            const batch = client.pipeline();
            for (let i = 0; i < depth; i += 1) batch.evalsha(shas.get(inner) ?? '', 1, key, 'v');
            await batch.exec();
          };
          for (let i = 0; i < 50; i += 1) await op();
          const cost = await measureCounters(FLOOR_CALLS / depth, op, redis, { idleMs: FLOOR_IDLE_MS });
          samples.set(`${inner}/${depth}`, [...(samples.get(`${inner}/${depth}`) ?? []), cost.cpuUs / depth]);
        }
      }
    }
    await client.del(key);
  } finally {
    client.disconnect();
  }
  const at = (inner: number, depth: number): number => percentile(samples.get(`${inner}/${depth}`) ?? [], 50);
  const points = [1, 21].flatMap((inner) => [1, 10].map((depth) => ({ inner, depth, us: at(inner, depth) })));
  const perSocketReadUs = (at(1, 1) - at(1, 10)) / 0.9;
  const perInnerCommandUs = (at(21, 1) - at(1, 1)) / 20;
  return { perSocketReadUs, perInnerCommandUs, perScriptUs: at(1, 1) - perSocketReadUs - perInnerCommandUs, points };
}

export function streamPrimitivesTable(report: StreamPrimitivesReport): string {
  const rows = report.dispatch.map(
    ({ name, counters: c, cpuRange, profile: p }) =>
      `| ${name} | ${fmt(c.cpuUs, 1)}; ${fmt(c.rawCpuUs, 1)} (rounds ${fmt(cpuRange[0], 0)}–${fmt(cpuRange[1], 0)}) | ${fmt(c.socketReads, 2)} | ${fmt(p.commands, 2)} | ${fmt(c.commands, 1)} | ${fmt(p.redisUs, 1)} |`,
  );
  const byCommand = report.dispatch.map(
    ({ name, profile }) => `| ${name} | ${profile.scripts.map((s) => `${s.name} ×${fmt(s.calls)} ${fmt(s.us, 1)} µs`).join('; ')} |`,
  );
  const f = report.floors;
  return [
    `| per cell, one at a time, consumer waiting (${report.rounds} rounds of ${report.cells}, variants in turn; the median round) | Redis CPU µs (less idle; raw) | socket reads | top-level commands | commands (script-inner included) | slow-log µs |`,
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    '| per cell, by command (slow log at threshold 0) | calls per cell, slow-log µs |',
    '|---|---|',
    ...byCommand,
    '',
    `| Redis CPU floors (script calls of k HSETs, 1 or 10 per socket write; median of ${FLOOR_ROUNDS} rounds of ${FLOOR_CALLS} calls) | µs |`,
    '|---|---|',
    ...f.points.map((p) => `| k = ${p.inner}, ${p.depth} per write, per call | ${fmt(p.us, 2)} |`),
    `| per socket read and its reply | ${fmt(f.perSocketReadUs, 2)} |`,
    `| per script call (beyond its read and inner commands) | ${fmt(f.perScriptUs, 2)} |`,
    `| per inner command (HSET) | ${fmt(f.perInnerCommandUs, 2)} |`,
  ].join('\n');
}

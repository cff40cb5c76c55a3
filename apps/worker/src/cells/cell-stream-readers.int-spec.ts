import type { Redis } from 'ioredis';
import type { CellJob } from '@codemode/contracts';
import { CELL_GROUP, CellStream, KeySpace, type CellEntry, type CellEntryRef } from '@codemode/events';
import { WorkerPresence } from '@codemode/fleet';
import { createLogger } from '@codemode/telemetry';
import { trivialCellJob } from '../../../../test/utils/cell-jobs';
import { deleteKeys, testPrefix, testRedis } from '../../../../test/utils/redis-test-keys';
import { CellReclaimer } from './cell-reclaimer';
import { CellStreamReaders, type StreamCellWork } from './cell-stream-readers';
import type { CellOutcome } from './cell-work';

/**
 * SPEC §13, `CODEMODE_CELL_DISPATCH=stream`: a worker's readers run each new cell of its shard's
 * stream and acknowledge it (the entry is gone); entries are reclaimed only from consumers whose
 * presence (their lease) is gone, never from a live one however long its entry waits.
 */
const prefix = testPrefix('worker', 'cell-stream');
const keys = new KeySpace(prefix);
const PRESENCE_TTL_MS = 400;
const logger = createLogger({ service: 'test', level: 'silent', version: 'test' });
const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let redis: Redis;
let stream: CellStream;
let presence: WorkerPresence;
let runs = 0;

beforeAll(async () => {
  redis = await testRedis('cell-stream');
  stream = new CellStream(redis, keys, 1);
  presence = new WorkerPresence(redis, keys);
});

afterEach(async () => {
  await redis.del(keys.cellStream('cells-0', 'first'), keys.cellStream('cells-0', 'rest'));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

function cellJob(): CellJob {
  runs += 1;
  return trivialCellJob(`run-${runs}`);
}

/** Worker `w-me`'s reclaimer, handing each entry it takes back to `deliver`. */
function reclaimerDelivering(deliver: (entry: CellEntry) => void): CellReclaimer {
  // `w-me` holds in hand what its reclaimer delivered to it.
  const inHand = new Set<string>();
  return new CellReclaimer({
    holds: (_shard, entry) => inHand.has(entry.id),
    stream,
    presence,
    workerId: 'w-me',
    presenceTtlMs: PRESENCE_TTL_MS,
    logger,
    deliver: (_shard, entry) => {
      inHand.add(entry.id);
      deliver(entry);
    },
    acknowledge: (shard, entry) => stream.ack(shard, entry),
  });
}

/** CellWork's place: records each run it is given; the first one's work ends only once `release` is called. */
function holdingTheFirst(lookAgainMs: number): { work: StreamCellWork; handled: string[]; release: () => void } {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const handled: string[] = [];
  const work: StreamCellWork = {
    lookAgainMs,
    runCell: async (cell) => {
      handled.push(cell.runId);
      if (handled.length === 1) await held;
      return 'done';
    },
    goOn: (_run, running) => running,
  };
  return { work, handled, release: () => release() };
}

/** CellWork's place: records each run it is given and answers what `outcomes` says (then `done`). */
function recordingWork(outcomes: CellOutcome[] = []): StreamCellWork & { handled: string[] } {
  const handled: string[] = [];
  return {
    handled,
    lookAgainMs: 200,
    runCell: (cell) => {
      handled.push(cell.runId);
      return Promise.resolve(outcomes.shift() ?? 'done');
    },
    goOn: (_run, work) => work,
  };
}

function readers(workerId: string, cells: StreamCellWork, on: CellStream = stream, budget = 4): CellStreamReaders {
  return new CellStreamReaders({
    enabled: true,
    stream: on,
    redis,
    presence,
    cells,
    workerId,
    budget,
    presenceTtlMs: PRESENCE_TTL_MS,
    logger,
    blockMs: 200,
  });
}

async function until(done: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await tick(50);
  }
}

/** Entries left, and entries pending, over both lanes of the one shard. */
const lanes = () => [keys.cellStream('cells-0', 'first'), keys.cellStream('cells-0', 'rest')];
const streamLength = async () => (await Promise.all(lanes().map((key) => redis.xlen(key)))).reduce((a, b) => a + b, 0);
const pendingCount = async () =>
  (await Promise.all(lanes().map(async (key) => Number((await redis.xpending(key, CELL_GROUP))[0])))).reduce((a, b) => a + b, 0);

it('runs a new cell of its shard and acknowledges it: the entry leaves the stream and the pending list', async () => {
  const work = recordingWork();
  const reader = readers('w-reader', work);
  reader.start();
  try {
    // Ready (the worker's readiness) once its shard's group exists and its connection answered, not before.
    expect(reader.running).toBe(false);
    await until(() => reader.running);
    const job = cellJob();
    await stream.add(job, 1);
    await until(async () => work.handled.length === 1 && (await streamLength()) === 0);
    expect(work.handled).toEqual([job.runId]);
    expect(await pendingCount()).toBe(0);
  } finally {
    await reader.close();
  }
});

/** The real stream, its acknowledgements counted; the first `lost` of them lose their reply after landing (a connection dropped). */
class CountedAcks extends CellStream {
  sent = 0;
  constructor(private lost = 0) {
    super(redis, keys, 1);
  }
  override async ack(shard: number, entry: CellEntryRef): Promise<void> {
    this.sent += 1;
    await super.ack(shard, entry);
    if (this.lost > 0) {
      this.lost -= 1;
      throw new Error('connection lost');
    }
  }
}

/** CellWork's place for a run that ends here: the end's write carries the entry's acknowledgement. */
function endingWork(): StreamCellWork & { handled: string[] } {
  const handled: string[] = [];
  return {
    handled,
    lookAgainMs: 200,
    runCell: (cell, entryAck) => {
      handled.push(cell.runId);
      entryAck.beside();
      return Promise.resolve('done');
    },
    goOn: (_run, work) => work,
  };
}

it('a run that ended here had its entry acknowledged beside its end: the reader sends no second acknowledgement', async () => {
  const counted = new CountedAcks();
  const work = endingWork();
  const reader = readers('w-beside', work, counted);
  reader.start();
  try {
    await counted.add(cellJob(), 1);
    await until(async () => work.handled.length === 1 && (await streamLength()) === 0);
    await tick(100);
    expect(counted.sent).toBe(1);
    expect(await pendingCount()).toBe(0);
  } finally {
    await reader.close();
  }
});

it('an acknowledgement beside the end whose reply was lost is sent again by the reader once the work ended', async () => {
  const counted = new CountedAcks(1);
  const work = endingWork();
  const reader = readers('w-beside-lost', work, counted);
  reader.start();
  try {
    await counted.add(cellJob(), 1);
    await until(() => counted.sent === 2);
    expect(await streamLength()).toBe(0);
    expect(await pendingCount()).toBe(0);
  } finally {
    await reader.close();
  }
});

it('takes back at start what its worker id held before (a restart under a fixed id), and leaves the group when it stops', async () => {
  await stream.ensureGroup(0);
  const job = cellJob();
  await stream.add(job, 1);
  expect(await stream.read(redis, 0, 'w-again', 1, 100)).toHaveLength(1);
  const work = recordingWork();
  const reader = readers('w-again', work);
  reader.start();
  await until(async () => work.handled.length === 1 && (await streamLength()) === 0);
  await reader.close();
  expect(work.handled).toEqual([job.runId]);
  for (const key of lanes()) {
    const consumers = (await redis.xinfo('CONSUMERS', key, CELL_GROUP)) as unknown[][];
    expect(consumers.map((fields) => fields[1])).not.toContain('w-again');
  }
});

it('keeps an entry whose owner is still alive pending, and handles it again half a lease later', async () => {
  const work = recordingWork(['later']);
  const reader = readers('w-later', work);
  reader.start();
  try {
    const job = cellJob();
    await stream.add(job, 1);
    await until(() => work.handled.length === 1);
    expect(await pendingCount()).toBe(1);
    await until(async () => work.handled.length === 2 && (await streamLength()) === 0);
    expect(work.handled).toEqual([job.runId, job.runId]);
    expect(await pendingCount()).toBe(0);
  } finally {
    await reader.close();
  }
});

it('reclaims the entry of a dead consumer only once its presence is gone, never a live one’s', async () => {
  await stream.ensureGroup(0);
  const [dead, live] = [cellJob(), cellJob()];
  await stream.add(dead, 1);
  await stream.add(live, 1);
  await presence.beat('w-dead', 60_000);
  await presence.beat('w-live', 60_000);
  // Each taken by a worker that then stops acknowledging (dead or busy for long).
  expect((await stream.read(redis, 0, 'w-dead', 1, 100)).map((e) => JSON.parse(e.job).runId)).toEqual([dead.runId]);
  expect((await stream.read(redis, 0, 'w-live', 1, 100)).map((e) => JSON.parse(e.job).runId)).toEqual([live.runId]);
  const work = recordingWork();
  const reader = readers('w-me', work);
  reader.start();
  try {
    // Many reclaim passes (every half lease) with both entries idle past a lease: nothing taken.
    await tick(PRESENCE_TTL_MS * 4);
    expect(work.handled).toEqual([]);
    await presence.leave('w-dead');
    await until(() => work.handled.length === 1);
    expect(work.handled).toEqual([dead.runId]);
    await until(async () => (await streamLength()) === 1);
    const pending = await stream.pending(0, 'first', 0, 10);
    expect(pending.map((e) => [e.consumer, e.deliveries])).toEqual([['w-live', 1]]);
    await tick(PRESENCE_TTL_MS * 2);
    expect(work.handled).toEqual([dead.runId]);
  } finally {
    await reader.close();
    await presence.leave('w-live');
  }
});

it('acknowledges and drops a dead consumer’s entry past its third delivery instead of handling it', async () => {
  await stream.ensureGroup(0);
  const job = cellJob();
  // On the rest lane (its tenant had calls in flight): the reclaimer looks at both lanes.
  const { id } = await stream.add(job, 3);
  await stream.read(redis, 0, 'w-gone-1', 1, 100);
  // Two more deliveries, each to a worker that died too.
  await stream.claim(0, 'rest', 'w-gone-2', 0, [id]);
  await stream.claim(0, 'rest', 'w-gone-3', 0, [id]);
  await tick(PRESENCE_TTL_MS + 50);
  const delivered: string[] = [];
  const reclaimer = reclaimerDelivering((entry) => delivered.push(entry.id));
  await reclaimer.reclaimAll();
  expect(delivered).toEqual([]);
  expect(await streamLength()).toBe(0);
  expect(await pendingCount()).toBe(0);
});

it('finds a dead consumer’s entry behind more than a page of a live consumer’s long-running ones', async () => {
  await stream.ensureGroup(0);
  await presence.beat('w-busy', 60_000);
  for (let i = 0; i < 70; i += 1) await stream.add(cellJob(), 1);
  await stream.read(redis, 0, 'w-busy', 70, 100);
  const lost = cellJob();
  await stream.add(lost, 1);
  await stream.read(redis, 0, 'w-crashed', 1, 100);
  await tick(PRESENCE_TTL_MS + 50);
  const delivered: string[] = [];
  const reclaimer = reclaimerDelivering((entry) => delivered.push((JSON.parse(entry.job) as CellJob).runId));
  try {
    await reclaimer.reclaimAll();
    expect(delivered).toEqual([lost.runId]);
  } finally {
    await presence.leave('w-busy');
  }
});

it('removes from the groups the consumers of dead workers that hold nothing, never a live one or one still holding an entry', async () => {
  await stream.ensureGroup(0);
  await presence.beat('w-idle-live', 60_000);
  // A crashed worker whose entry was acknowledged (reclaimed and run elsewhere), a live idle one, and a dead one still holding an entry.
  await stream.add(cellJob(), 1);
  const [done] = await stream.read(redis, 0, 'w-crashed', 1, 100);
  await stream.ack(0, done);
  await stream.add(cellJob(), 1);
  const [ran] = await stream.read(redis, 0, 'w-idle-live', 1, 100);
  await stream.ack(0, ran);
  await stream.add(cellJob(), 3);
  await stream.read(redis, 0, 'w-holding', 1, 100);
  expect((await stream.consumers(0)).sort()).toEqual(['w-crashed', 'w-holding', 'w-idle-live']);
  try {
    await reclaimerDelivering(() => undefined).forgetDeadConsumers();
    expect((await stream.consumers(0)).sort()).toEqual(['w-holding', 'w-idle-live']);
  } finally {
    await presence.leave('w-idle-live');
  }
});

it('takes back, a lease later, an entry a read delivered to it whose reply it never saw, while it runs on; never one it holds', async () => {
  const { work, handled, release } = holdingTheFirst(60_000);
  await presence.beat('w-lost', 60_000);
  // One slot: while the long cell holds it, the reader reads nothing more.
  const reader = readers('w-lost', work, stream, 1);
  reader.start();
  try {
    const [long, lost] = [cellJob(), cellJob()];
    await stream.add(long, 1);
    await until(() => handled.length === 1);
    await stream.add(lost, 1);
    // Delivered to this consumer as a read whose reply a reset connection lost would be.
    expect((await stream.read(redis, 0, 'w-lost', 1, 100)).map((e) => (JSON.parse(e.job) as CellJob).runId)).toEqual([lost.runId]);
    await until(() => handled.length === 2, PRESENCE_TTL_MS * 10);
    expect(handled).toEqual([long.runId, lost.runId]);
    // The long one, in hand and idle past a lease, is left to its work (never handled twice).
    await tick(PRESENCE_TTL_MS * 3);
    expect(handled).toEqual([long.runId, lost.runId]);
    release();
    await until(async () => (await pendingCount()) === 0);
  } finally {
    release();
    await reader.close();
    await presence.leave('w-lost');
  }
});

it('runs at close an entry a read delivered to it whose reply it never saw (its connection closed), and one it holds', async () => {
  const { work, handled, release } = holdingTheFirst(200);
  // One slot: while the first cell holds it, the reader reads nothing more.
  const reader = readers('w-closing', work, stream, 1);
  reader.start();
  const [first, unseen] = [cellJob(), cellJob()];
  await stream.add(first, 1);
  await until(() => handled.length === 1);
  await stream.add(unseen, 1);
  // Delivered to this consumer as a read the shutdown cut off would be: pending, its reply lost.
  expect((await stream.read(redis, 0, 'w-closing', 1, 100)).map((e) => (JSON.parse(e.job) as CellJob).runId)).toEqual([unseen.runId]);
  const closing = reader.close();
  release();
  await closing;
  expect(handled).toEqual([first.runId, unseen.runId]);
  expect(await streamLength()).toBe(0);
  expect(await pendingCount()).toBe(0);
});

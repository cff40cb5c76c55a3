import type { Redis } from 'ioredis';
import { trivialCellJob } from '../../../../test/utils/cell-jobs';
import { KeySpace } from '../platform/keys';
import { testPrefix, testRedis } from '../test-support';
import { CellStream, cellLane } from './cell-stream';

/** The shard streams of new cells (SPEC §13, `CODEMODE_CELL_DISPATCH=stream`) as the gauges and reclaimers read them. */
const prefix = testPrefix('cell-stream');
const keys = new KeySpace(prefix);
let redis: Redis;
let stream: CellStream;

beforeAll(async () => {
  redis = await testRedis('cell-stream');
  stream = new CellStream(redis, keys, 1);
});

afterEach(async () => {
  await redis.del(keys.cellStream('cells-0', 'first'), keys.cellStream('cells-0', 'rest'));
});

afterAll(async () => {
  await redis.quit();
});

const job = trivialCellJob;
const msOf = (id: string) => Number(id.split('-')[0]);

it('puts a cell on the first lane while its tenant has at most two calls in flight, on the rest lane past that', () => {
  expect([1, 2, 3, 40].map(cellLane)).toEqual(['first', 'first', 'rest', 'rest']);
});

it('counts entries not delivered as waiting, since the oldest of them, and delivered ones as active until acknowledged', async () => {
  expect(await stream.depth(0)).toEqual({ waiting: 0, active: 0, oldestWaitingAt: null });
  const first = await stream.add(job('r1'), 1);
  // Before any worker created the group: waiting since the first entry.
  expect(await stream.depth(0)).toEqual({ waiting: 1, active: 0, oldestWaitingAt: msOf(first.id) });
  await stream.ensureGroup(0);
  const second = await stream.add(job('r2'), 1);
  const flooded = await stream.add(job('r2b'), 5);
  expect(flooded.lane).toBe('rest');
  expect(await stream.depth(0)).toEqual({ waiting: 3, active: 0, oldestWaitingAt: msOf(first.id) });
  const [read] = await stream.read(redis, 0, 'w1', 1, 100);
  expect(read.id).toBe(first.id);
  // One read took one entry of each lane: the rest lane's is active too.
  expect(await stream.depth(0)).toEqual({ waiting: 1, active: 2, oldestWaitingAt: msOf(second.id) });
  await stream.ack(0, first);
  await stream.ack(0, flooded);
  expect(await stream.depth(0)).toEqual({ waiting: 1, active: 0, oldestWaitingAt: msOf(second.id) });
});

it('delivers a first-lane entry written after 50 rest-lane entries in the first read, ahead of them', async () => {
  await stream.ensureGroup(0);
  for (let i = 0; i < 50; i += 1) await stream.add(job(`flood-${i}`), 3 + i);
  const polite = await stream.add(job('polite'), 1);
  const [taken] = await stream.read(redis, 0, 'w1', 1, 100);
  expect(taken).toMatchObject({ lane: 'first', id: polite.id });
  expect(JSON.parse(taken.job)).toMatchObject({ runId: 'polite' });
});

it('claims an entry only once it has been idle for the bound, and counts the claim as a delivery', async () => {
  await stream.ensureGroup(0);
  const { id } = await stream.add(job('r3'), 3);
  const read = await stream.read(redis, 0, 'w1', 10, 100);
  expect(read.map((e) => e.id)).toContain(id);
  expect(await stream.claim(0, 'rest', 'w2', 60_000, [id])).toEqual([]);
  const [claimed] = await stream.claim(0, 'rest', 'w2', 0, [id]);
  expect(claimed.lane).toBe('rest');
  expect(JSON.parse(claimed.job)).toMatchObject({ runId: 'r3' });
  const pending = (await stream.pending(0, 'rest', 0, 10)).find((e) => e.id === id);
  expect(pending).toMatchObject({ lane: 'rest', consumer: 'w2', deliveries: 2 });
});

it('lets a consumer leave only when it holds nothing on either lane', async () => {
  await stream.ensureGroup(0);
  const held = await stream.add(job('r4'), 9);
  await stream.read(redis, 0, 'w3', 1, 100);
  expect(await stream.leave(0, 'w3')).toBe(false);
  await stream.ack(0, held);
  expect(await stream.leave(0, 'w3')).toBe(true);
});

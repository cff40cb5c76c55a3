import type { Redis } from 'ioredis';
import { trivialCellJob } from '../../../../test/utils/cell-jobs';
import { KeySpace } from '../platform/keys';
import { testPrefix, testRedis } from '../test-support';
import { CellStream } from './cell-stream';

/** The shard streams of new cells (SPEC §13, `CODEMODE_CELL_DISPATCH=stream`) as the gauges and reclaimers read them. */
const prefix = testPrefix('cell-stream');
const keys = new KeySpace(prefix);
let redis: Redis;
let stream: CellStream;

beforeAll(async () => {
  redis = await testRedis('cell-stream');
  stream = new CellStream(redis, keys, 1);
});

afterAll(async () => {
  await redis.del(keys.cellStream('cells-0'));
  await redis.quit();
});

const job = trivialCellJob;

it('counts entries not delivered as waiting, since the oldest of them, and delivered ones as active until acknowledged', async () => {
  expect(await stream.depth(0)).toEqual({ waiting: 0, active: 0, oldestWaitingAt: null });
  const first = await stream.add(job('r1'));
  // Before any worker created the group: waiting since the first entry.
  expect(await stream.depth(0)).toEqual({ waiting: 1, active: 0, oldestWaitingAt: Number(first.split('-')[0]) });
  await stream.ensureGroup(0);
  const second = await stream.add(job('r2'));
  expect(await stream.depth(0)).toEqual({ waiting: 2, active: 0, oldestWaitingAt: Number(first.split('-')[0]) });
  const [read] = await stream.read(redis, 0, 'w1', 1, 100);
  expect(read.id).toBe(first);
  expect(await stream.depth(0)).toEqual({ waiting: 1, active: 1, oldestWaitingAt: Number(second.split('-')[0]) });
  await stream.ack(0, first);
  expect(await stream.depth(0)).toEqual({ waiting: 1, active: 0, oldestWaitingAt: Number(second.split('-')[0]) });
});

it('claims an entry only once it has been idle for the bound, and counts the claim as a delivery', async () => {
  await stream.ensureGroup(0);
  const id = await stream.add(job('r3'));
  const read = await stream.read(redis, 0, 'w1', 10, 100);
  expect(read.map((e) => e.id)).toContain(id);
  expect(await stream.claim(0, 'w2', 60_000, [id])).toEqual([]);
  const [claimed] = await stream.claim(0, 'w2', 0, [id]);
  expect(JSON.parse(claimed.job)).toMatchObject({ runId: 'r3' });
  const pending = (await stream.pending(0, 0, 10)).find((e) => e.id === id);
  expect(pending).toMatchObject({ consumer: 'w2', deliveries: 2 });
});

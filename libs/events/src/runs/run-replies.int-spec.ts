import type { Redis } from 'ioredis';
import { ReplyWaitAbortedError } from '../platform/errors';
import { KeySpace } from '../platform/keys';
import { RunLedger } from './run-ledger';
import { RunReplies } from './run-replies';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis } from '../test-support';
import { createRedis } from '../platform/redis';

const prefix = testPrefix('replies');
const keys = new KeySpace(prefix);
const ref = { tenant: 'acme', sessionId: 'replies' };
const SUBSCRIBER_NAME = `${prefix}-sub`;
let redis: Redis;
let replies: RunReplies;
let runs: RunLedger;

beforeAll(async () => {
  redis = await testRedis('replies');
  replies = new RunReplies(createRedis('redis://127.0.0.1:6379', { name: SUBSCRIBER_NAME, subscriber: true }), keys, 'api-test');
  await replies.start();
  runs = new RunLedger(redis, keys);
});

afterAll(async () => {
  await replies.close();
  await deleteKeys(redis, prefix);
  await redis.quit();
});

test('started then result arrive through the SPUBLISH inside start and finish', async () => {
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  const order: string[] = [];
  const controller = new AbortController();
  const answer = replies.waitFor(runId, { signal: controller.signal, onStarted: () => order.push('started') });
  const other = replies.waitFor(runId, { signal: controller.signal });
  await runs.start(ref, newRunId(), { workerId: 'w', epoch: 1, replyTo: replies.channelFor(ref) }); // unknown run: no message
  await runs.start(ref, runId, { workerId: 'w', epoch: 1, replyTo: replies.channelFor(ref) });
  const result = completed({ empty: [] });
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result, replyTo: replies.channelFor(ref) });
  expect(await answer).toEqual(result);
  expect(await other).toEqual(result);
  order.push('result');
  expect(order).toEqual(['started', 'result']);
  // When the reply arrives, the event is already in the log.
  expect((await runs.get(ref, runId))?.status).toBe('completed');
});

test('messages for unknown runIds and malformed messages are ignored; abort rejects', async () => {
  const runId = newRunId();
  const controller = new AbortController();
  const pending = replies.waitFor(runId, { signal: controller.signal });
  await redis.spublish(replies.channelFor(ref), 'not json');
  await redis.spublish(replies.channelFor(ref), JSON.stringify({ kind: 'result', runId: newRunId(), result: completed(1) }));
  await redis.spublish(replies.channelFor(ref), JSON.stringify({ kind: 'result', runId }));
  await new Promise((r) => setTimeout(r, 50));
  controller.abort();
  await expect(pending).rejects.toBeInstanceOf(ReplyWaitAbortedError);
  await expect(pending).rejects.toMatchObject({ name: 'AbortError', code: 'aborted' });
  await expect(replies.waitFor(runId, { signal: controller.signal })).rejects.toBeInstanceOf(ReplyWaitAbortedError);
});

test('a waiter hears of the gap when its subscriber reconnects, and a reply after it still arrives', async () => {
  const runId = newRunId();
  const controller = new AbortController();
  let gaps = 0;
  const answer = replies.waitFor(runId, { signal: controller.signal, onGap: () => (gaps += 1) });
  // The subscriber's connection drops (as in a Redis restart): ioredis reconnects and subscribes again.
  // Only this test's subscriber: other suites share this Redis.
  const list = (await redis.client('LIST')) as string;
  const ids = list
    .split('\n')
    .filter((line) => line.includes(`name=${SUBSCRIBER_NAME} `))
    .map((line) => /\bid=(\d+)/.exec(line)?.[1]);
  expect(ids).toHaveLength(1);
  await redis.client('KILL', 'ID', ids[0]!);
  const until = Date.now() + 5000;
  while (gaps === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  expect(gaps).toBe(1);
  await redis.spublish(replies.channelFor(ref), JSON.stringify({ kind: 'result', runId, result: completed(7) }));
  expect(await answer).toEqual(completed(7));
});

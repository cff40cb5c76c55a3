import type { Redis } from 'ioredis';
import type { Event, SessionRef } from '@codemode/contracts';
import { InvalidArgumentError, InvalidCursorError, InvalidEventError } from '../platform/errors';
import { EventLog, MAX_PAGE } from './event-log';
import { KeySpace } from '../platform/keys';
import { RunLedger } from '../runs/run-ledger';
import { deleteKeys, failed, newRunId, requestData, testPrefix, testRedis, untypedAppend } from '../test-support';

const prefix = testPrefix('log');
const keys = new KeySpace(prefix);
let redis: Redis;
let log: EventLog;
const paged: SessionRef = { tenant: 'acme', sessionId: 'paged' };

beforeAll(async () => {
  redis = await testRedis('log');
  log = new EventLog(redis, keys);
  for (let i = 0; i < 250; i++) await log.append(paged, untypedAppend({ type: 'shell.output', data: { i } }));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

test('paging over 250 events with after/limit/next', async () => {
  const seen: Event[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await log.read(paged, { after, limit: 100 });
    pages++;
    seen.push(...page.events);
    if (!page.next) break;
    expect(page.next).toBe(page.events[page.events.length - 1].id);
    after = page.next;
  }
  expect(pages).toBe(3);
  expect(seen.map((e) => e.data.i)).toEqual(Array.from({ length: 250 }, (_, i) => i));
  expect(seen[0]).toEqual({ id: expect.stringMatching(/^\d+-\d+$/), type: 'shell.output', at: expect.any(String), data: { i: 0 } });
  expect(new Date(seen[0].at).toISOString()).toBe(seen[0].at);
  expect(Math.abs(Date.parse(seen[0].at) - Number(seen[0].id.split('-')[0]))).toBeLessThan(1000);

  // An exact fit has no next page; after the last event the page is empty.
  expect((await log.read(paged, { after: seen[149].id, limit: 100 })).next).toBeNull();
  expect(await log.read(paged, { after: seen[249].id, limit: 5 })).toEqual({ events: [], next: null });
  expect((await log.read(paged, { limit: 1000 })).events).toHaveLength(250);
});

test('limit bounds and invalid cursors', async () => {
  for (const limit of [0, -1, 1001, 1.5, Number.NaN]) {
    await expect(log.read(paged, { limit })).rejects.toBeInstanceOf(InvalidArgumentError);
  }
  expect((await log.read(paged, { limit: 1 })).events).toHaveLength(1);
  for (const after of ['abc', '1-2-3', '', '-', '+', '$', '99999999999999999999999-0', '18446744073709551615-18446744073709551615']) {
    await expect(log.read(paged, { after, limit: 10 })).rejects.toBeInstanceOf(InvalidCursorError);
  }
  expect((await log.read(paged, { after: '0', limit: 2 })).events).toHaveLength(2);
});

test('history from a millisecond on: only events appended from then (what recovery reads)', async () => {
  const ref = { tenant: 'acme', sessionId: 'since' };
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 1 } }));
  await new Promise((resolve) => setTimeout(resolve, 5));
  const { eventId } = await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 2 } }));
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 3 } }));
  const since = Number(eventId.split('-')[0]);
  expect((await log.history(ref, since)).map((e) => e.data.n)).toEqual([2, 3]);
  expect((await log.history(ref)).map((e) => e.data.n)).toEqual([1, 2, 3]);
});

test('runEvents: one run’s events from a millisecond on, across pages, none of another run’s', async () => {
  const ref = { tenant: 'acme', sessionId: 'one-run' };
  const runs = new RunLedger(redis, keys);
  const early = newRunId();
  await runs.request(ref, early, requestData('early'));
  await new Promise((resolve) => setTimeout(resolve, 5));
  const mine = newRunId();
  const other = newRunId();
  await runs.request(ref, mine, requestData('mine'));
  await runs.request(ref, other, requestData('other'));
  // More than a page of the session's log lies between the run's first and last events.
  for (let i = 0; i < MAX_PAGE + 5; i++) await log.append(ref, untypedAppend({ type: 'shell.output', data: { i } }));
  await runs.start(ref, mine, { workerId: 'w1', epoch: 1, replyTo: '' });
  await runs.start(ref, other, { workerId: 'w1', epoch: 1, replyTo: '' });
  // Both runs are live, as every run its callers read is (a finished run's entries leave the log
  // for its record, run-record.lua): the other's entries lie among this one's.
  const since = Date.parse((await runs.get(ref, mine))!.createdAt);
  const events = await log.runEvents(ref, mine, since);
  expect(events.map((e) => [e.type, e.runId])).toEqual([
    ['run.requested', mine],
    ['run.started', mine],
  ]);
  expect(events[0].data).toMatchObject({ title: 'mine' });
  expect(await log.runEvents(ref, early, since)).toEqual([]);
  expect((await log.runEvents(ref, early, 0)).map((e) => e.type)).toEqual(['run.requested']);
});

test('exists: false until the first write', async () => {
  const ref = { tenant: 'acme', sessionId: 'fresh' };
  expect(await log.exists(ref)).toBe(false);
  await log.append(ref, untypedAppend({ type: 'shell.output', data: {} }));
  expect(await log.exists(ref)).toBe(true);
});

test('generic append refuses scripted types and run events without runId', async () => {
  const ref = { tenant: 'acme', sessionId: 'generic' };
  await expect(log.append(ref, untypedAppend({ type: 'run.started', runId: newRunId(), data: {} }))).rejects.toBeInstanceOf(
    InvalidEventError,
  );
  await expect(log.append(ref, untypedAppend({ type: 'session.configured', data: {} }))).rejects.toBeInstanceOf(InvalidEventError);
  await expect(log.append(ref, untypedAppend({ type: 'tools.registered', data: {} }))).rejects.toBeInstanceOf(InvalidEventError);
  await expect(log.append(ref, untypedAppend({ type: 'store.committed', runId: newRunId(), data: {} }))).rejects.toBeInstanceOf(
    InvalidEventError,
  );
  await expect(log.append(ref, { type: 'run.output', data: {} })).rejects.toBeInstanceOf(InvalidEventError);
  expect(await log.exists(ref)).toBe(false);
});

test('follow yields events appended after it started and stops on abort', async () => {
  const ref = { tenant: 'acme', sessionId: 'live' };
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 0 } }));
  const start = (await log.read(ref, { limit: 10 })).events[0].id;
  const controller = new AbortController();
  const got: Event[] = [];
  const done = (async () => {
    for await (const event of log.follow(ref, start, controller.signal)) {
      got.push(event);
      if (got.length === 3) controller.abort();
    }
  })();
  const runs = new RunLedger(redis, keys);
  const runId = newRunId();
  await new Promise((r) => setTimeout(r, 50));
  await runs.request(ref, runId, requestData());
  await runs.abandonUnstarted(ref, runId, failed('no worker'));
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 1 } }));
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 2 } }));
  await done;
  expect(got.map((e) => e.type)).toEqual(['run.requested', 'run.failed', 'shell.output']);
  expect(got[0].runId).toBe(runId);
});

test('follow without a cursor starts at the tail; abort ends an idle wait and closes its connection', async () => {
  const ref = { tenant: 'acme', sessionId: 'tail' };
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { old: true } }));
  const controller = new AbortController();
  const iterator = log.follow(ref, undefined, controller.signal)[Symbol.asyncIterator]();
  const first = iterator.next();
  await new Promise((r) => setTimeout(r, 100));
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { old: false } }));
  expect((await first).value).toMatchObject({ data: { old: false } });
  const clientsBefore = await countFollowers();
  const idle = iterator.next();
  await new Promise((r) => setTimeout(r, 50));
  const t0 = Date.now();
  controller.abort();
  expect(await idle).toEqual({ done: true, value: undefined });
  expect(Date.now() - t0).toBeLessThan(1000);
  await new Promise((r) => setTimeout(r, 50));
  expect(await countFollowers()).toBe(clientsBefore - 1);
  await expect(log.follow(ref, 'nope', controller.signal)[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(InvalidCursorError);
});

async function countFollowers(): Promise<number> {
  const list = (await redis.client('LIST')) as string;
  return list.split('\n').filter((line) => line.includes('name=events-follow')).length;
}

test('a page is bounded by bytes as well as by count; an event larger than the bound comes alone', async () => {
  const ref = { tenant: 'acme', sessionId: 'large' };
  const big = 'x'.repeat(100_000);
  for (let i = 0; i < 5; i++) await log.append(ref, untypedAppend({ type: 'shell.output', data: { i, big } }));
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { i: 5, big: big.repeat(4) } }));
  const sizes: number[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await log.read(ref, { after, limit: 100, maxBytes: 250_000 });
    sizes.push(page.events.length);
    if (!page.next) break;
    after = page.next;
  }
  expect(sizes).toEqual([2, 2, 1, 1]);
  expect((await log.read(ref, { limit: 100, maxBytes: 1 })).events.map((e) => e.data.i)).toEqual([0]);
});

test('follow reads the next page only once the consumer took the last event of the one before', async () => {
  const ref = { tenant: 'acme', sessionId: 'paced' };
  const big = 'x'.repeat(100_000);
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push((await log.append(ref, untypedAppend({ type: 'shell.output', data: { i, big } }))).eventId);
  const controller = new AbortController();
  const iterator = log.follow(ref, '0-0', controller.signal, 250_000)[Symbol.asyncIterator]();
  expect((await iterator.next()).value).toMatchObject({ data: { i: 0 } });
  expect((await iterator.next()).value).toMatchObject({ data: { i: 1 } });
  // Events 2-5 go before the consumer asks again: a follower that had read ahead would still yield them.
  await redis.xdel(keys.events(ref), ...ids.slice(2));
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { i: 6 } }));
  expect((await iterator.next()).value).toMatchObject({ data: { i: 6 } });
  controller.abort();
  expect(await iterator.next()).toEqual({ done: true, value: undefined });
});

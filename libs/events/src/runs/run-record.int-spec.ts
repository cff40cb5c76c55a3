import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { EventLog } from '../log/event-log';
import type { LoggedEvent } from '../log/event-encoding';
import { SessionLedger } from '../ledgers/session-ledger';
import { KeySpace } from '../platform/keys';
import { RunAlreadyEndedError } from '../platform/errors';
import { ScriptLoader } from '../platform/script-loader';
import { RunLedger } from './run-ledger';
import { pastField } from './run-record';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

// A finished run kept compact is one record (lua/includes/run-record.lua): every reader and every
// script answers it as it answered the run's hash and entries.
const prefix = testPrefix('run-record');
const keys = new KeySpace(prefix);
/** Two seconds of retention: a record holds a run whose life was at most half a second (retention / 4). */
const RETENTION_MS = 2000;
const SPAN_MS = RETENTION_MS / 4;
let redis: Redis;
let packing: RunLedger;
let plain: RunLedger;
let log: EventLog;
let sessions: SessionLedger;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `rec-${++n}` });
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await sleep(10);
  }
}

beforeAll(async () => {
  redis = await testRedis('run-record');
  const scripts = ScriptLoader.withSettings({ retentionSeconds: RETENTION_MS / 1000 });
  packing = new RunLedger(redis, keys, scripts);
  plain = new RunLedger(redis, keys, ScriptLoader.withSettings({ retentionSeconds: RETENTION_MS / 1000, compactRuns: false }));
  log = new EventLog(redis, keys, scripts);
  sessions = new SessionLedger(redis, keys, scripts);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function folded(ref: SessionRef, runId: string): Promise<string | null> {
  expect(await redis.exists(keys.run(ref, runId))).toBe(0);
  return redis.hget(keys.pastRuns(ref), pastField(runId));
}

/** Every page of `limit` events from each event of `all` on: what follows it in `all`, whatever the limit. */
async function expectPagesFromEveryCursor(ref: SessionRef, all: LoggedEvent[]): Promise<void> {
  for (const limit of [1, 2, 5]) {
    for (let i = -1; i < all.length; i++) {
      const read: string[] = [];
      let after: string | undefined = i < 0 ? undefined : all[i].id;
      for (;;) {
        const page = await log.readLogged(ref, { after, limit });
        read.push(...page.events.map((e) => e.id));
        if (!page.next) break;
        after = page.next;
      }
      expect([limit, i, read]).toEqual([limit, i, all.slice(i + 1).map((e) => e.id)]);
    }
  }
}

test('every script answers a folded run as it answered its ended hash', async () => {
  const [compact, full] = [newRef(), newRef()];
  const runId = newRunId();
  for (const [ledger, ref] of [
    [packing, compact],
    [plain, full],
  ] as const) {
    await ledger.request(ref, runId, { ...requestData('ended', 'return 1'), restartSafe: true });
    await ledger.start(ref, runId, W);
    await ledger.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
  }
  expect(await folded(compact, runId)).toMatch(/^A/);
  expect(await redis.exists(keys.run(full, runId))).toBe(1);

  const answers = async (ledger: RunLedger, ref: SessionRef) => ({
    status: await ledger.status(ref, runId),
    abandon: await ledger.abandonUnstarted(ref, runId, completed(0)),
    takeOver: await ledger.takeOver(ref, runId, { workerId: 'w-2', from: { owner: 'w-1', epoch: 1 }, reason: 'test' }),
    release: await ledger.release(ref, runId, { workerId: 'w-1', epoch: 1, reason: 'test' }),
    resume: await ledger.resume(ref, runId, { token: 't', workerId: 'w-1', epoch: 1, replyTo: '', input: {} }),
    giveBack: await ledger.giveBackResume(ref, runId, 't'),
    owe: await ledger.oweAnswer(ref, runId),
    reserve: await ledger.reserveResume(ref, runId, 'tok', 60_000),
    append: await ledger.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: 'late' } }).catch((e: unknown) => e),
    finish: await ledger.finish(ref, runId, { epoch: 1, type: 'run.failed', result: completed(2) }).catch((e: unknown) => e),
    again: await ledger.request(ref, runId, requestData()).catch((e: unknown) => e),
  });
  const [fromRecord, fromHash] = [await answers(packing, compact), await answers(plain, full)];
  expect(fromRecord).toEqual(fromHash);
  expect(fromRecord.status).toBe('completed');
  expect(fromRecord.append).toBeInstanceOf(RunAlreadyEndedError);
  expect(fromRecord.reserve).toMatchObject({ reserved: false, status: 'completed', restartSafe: true, owner: 'w-1' });
  // Nothing they answered wrote a hash back.
  expect(await redis.exists(keys.run(compact, runId))).toBe(0);
  expect((await packing.get(compact, runId))?.lastResult).toEqual(completed(1));
});

test('the feed reads the same events from every cursor before and after runs fold, interleaved with others', async () => {
  const ref = newRef();
  const [a, b] = [newRunId(), newRunId()];
  await packing.request(ref, a, requestData('a'));
  await packing.request(ref, b, requestData('b'));
  await packing.start(ref, a, W);
  await sleep(5);
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 1 } }));
  await packing.start(ref, b, W);
  await sleep(5);
  await packing.append(ref, { type: 'run.output', runId: a, epoch: 1, data: { text: 'a1' } });
  await packing.append(ref, { type: 'run.output', runId: b, epoch: 1, data: { text: 'b1' } });
  const live = (await log.history(ref)).map((e) => e.id);
  await expectPagesFromEveryCursor(ref, await log.history(ref));

  await packing.finish(ref, a, { epoch: 1, type: 'run.completed', result: completed('a') });
  await sleep(5);
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 2 } }));
  await packing.finish(ref, b, { epoch: 1, type: 'run.completed', result: completed('b') });
  expect(await folded(ref, a)).toMatch(/^A/);
  expect(await folded(ref, b)).toMatch(/^A/);
  // Only the two session events are left in the stream.
  expect(await redis.xlen(keys.events(ref))).toBe(2);

  const all = await log.history(ref);
  expect(all.map((e) => e.id).slice(0, live.length)).toEqual(live);
  expect(all.map((e) => `${e.type}:${e.runId === a ? 'a' : e.runId === b ? 'b' : '-'}`)).toEqual([
    'run.requested:a',
    'run.requested:b',
    'run.started:a',
    'shell.output:-',
    'run.started:b',
    'run.output:a',
    'run.output:b',
    'run.completed:a',
    'shell.output:-',
    'run.completed:b',
  ]);
  await expectPagesFromEveryCursor(ref, all);
  expect((await sessions.get(ref))?.counts.events).toBe(all.length);
  expect(await packing.resultAt(ref, all[7].id)).toEqual(completed('a'));
  expect((await packing.transcript(ref))?.map((e) => `${e.kind}:${e.runId === a ? 'a' : 'b'}`)).toEqual([
    'input:a',
    'input:b',
    'result:a',
    'result:b',
  ]);
});

test('while a live tail follows the session, a folded run keeps its end in the stream, read once, until the next fold', async () => {
  const ref = newRef();
  const controller = new AbortController();
  const tailed: string[] = [];
  const tail = (async () => {
    for await (const event of log.follow(ref, '0-0', controller.signal)) tailed.push(event.id);
  })();
  await waitFor(async () => (await redis.exists(keys.followed(ref))) === 1);
  const ends: string[] = [];
  for (const value of [1, 2]) {
    const runId = newRunId();
    await packing.request(ref, runId, requestData());
    await packing.start(ref, runId, W);
    ends.push((await packing.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(value) })).eventId);
    expect(await folded(ref, runId)).toMatch(/^A/);
    // The run's end wakes the tail: it is the one entry the stream keeps.
    expect((await redis.xrange(keys.events(ref), '-', '+')).map(([id]) => id)).toEqual([ends.at(-1)]);
  }
  const all = await log.history(ref);
  expect(all).toHaveLength(6);
  await expectPagesFromEveryCursor(ref, all);
  expect((await sessions.get(ref))?.counts.events).toBe(6);
  await waitFor(() => tailed.length === 6);
  expect(tailed).toEqual(all.map((e) => e.id));
  controller.abort();
  await tail;

  // Nobody follows: the next fold takes the kept end out too.
  await redis.del(keys.followed(ref));
  const last = newRunId();
  await packing.request(ref, last, requestData());
  await packing.start(ref, last, W);
  await packing.finish(ref, last, { epoch: 1, type: 'run.completed', result: completed(3) });
  expect(await redis.xlen(keys.events(ref))).toBe(0);
  expect(await log.history(ref)).toHaveLength(9);
  expect((await sessions.get(ref))?.counts.events).toBe(9);
});

test('a run longer than a record holds keeps its entries in the log; its record holds its hash', async () => {
  const ref = newRef();
  const runId = newRunId();
  await packing.request(ref, runId, requestData());
  await packing.start(ref, runId, W);
  await packing.append(ref, untypedAppend({ type: 'run.parked', runId, epoch: 1, data: { result: waiting(runId) } }));
  await sleep(SPAN_MS + 50);
  await packing.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(3) });
  expect(await folded(ref, runId)).toMatch(/^B/);
  expect(await redis.xlen(keys.events(ref))).toBe(4);
  const events = await log.history(ref);
  expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.parked', 'run.completed']);
  expect(await packing.get(ref, runId)).toMatchObject({ status: 'completed', lastResult: completed(3) });
  expect((await sessions.get(ref))?.counts.events).toBe(4);
});

test('a run whose entries hold more than a record holds (16 KiB of data) keeps them in the log', async () => {
  const ref = newRef();
  const runId = newRunId();
  await packing.request(ref, runId, requestData());
  await packing.start(ref, runId, W);
  await packing.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed('y'.repeat(20_000)) });
  expect(await folded(ref, runId)).toMatch(/^B/);
  expect(await redis.xlen(keys.events(ref))).toBe(3);
  expect((await packing.get(ref, runId))?.lastResult).toEqual(completed('y'.repeat(20_000)));
});

test('retention through a folded run keeps its events from the point on and its view, until a later trim passes its end', async () => {
  const ref = newRef();
  const runId = newRunId();
  await packing.request(ref, runId, requestData());
  await packing.start(ref, runId, W);
  await sleep(100);
  await packing.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: 'early' } });
  await sleep(250);
  await packing.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: 'late' } });
  await packing.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(4) });
  const record = await folded(ref, runId);
  expect(record).toMatch(/^A/);
  const events = await log.history(ref);
  const requestedMs = Number(events[0].id.split('-')[0]);

  // The next append trims (once per retention here) with its point ~225 ms into the run's life.
  await sleep(requestedMs + RETENTION_MS + 225 - Date.now());
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 1 } }));
  const point = Number(await redis.hget(keys.session(ref), 'trimmedTo'));
  const kept = events.filter((e) => Number(e.id.split('-')[0]) >= point);
  // The point fell inside the run's life: some of its events were cut, some kept.
  expect(kept.length).toBeGreaterThan(0);
  expect(kept.length).toBeLessThan(events.length);
  const after = await log.history(ref);
  expect(after.slice(0, -1)).toEqual(kept);
  await expectPagesFromEveryCursor(ref, after);
  expect((await sessions.get(ref))?.counts.events).toBe(after.length);
  expect(await redis.zscore(keys.runs(ref), runId)).toBeNull();
  expect(await redis.zscore(keys.pastRunsCut(ref), runId)).not.toBeNull();
  expect((await packing.get(ref, runId))?.status).toBe('completed');

  // A later trim passes its end: the record goes, and the view with it.
  await sleep(RETENTION_MS + 100);
  await log.append(ref, untypedAppend({ type: 'shell.output', data: { n: 2 } }));
  expect(await redis.hexists(keys.pastRuns(ref), pastField(runId) as string)).toBe(0);
  expect(await redis.zscore(keys.pastRunsCut(ref), runId)).toBeNull();
  expect(await packing.get(ref, runId)).toBeNull();
  expect((await log.history(ref)).map((e) => e.type)).toEqual(['shell.output']);
  expect((await sessions.get(ref))?.counts.events).toBe(1);
});

import type { Redis } from 'ioredis';
import { REPAIR_REASONS, type SessionRef } from '@codemode/contracts';
import { RunAlreadyEndedError, RunNotFoundError, RunNotStartedError, StaleEpochError } from '../platform/errors';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { rebuildRun } from '../log/projections/rebuild-run';
import { rebuildSession } from '../log/projections/rebuild-session';
import { rebuildTranscript } from '../log/projections/rebuild-transcript';
import { RunLedger } from './run-ledger';
import { pastField, recordFields } from './run-record';
import { SessionLedger } from '../ledgers/session-ledger';
import { completed, deleteKeys, failed, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

const prefix = testPrefix('runs');
const keys = new KeySpace(prefix);
let api: Redis;
let worker: Redis;
let runs: RunLedger;
let workerRuns: RunLedger;
let log: EventLog;
let sessions: SessionLedger;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}:x.y` });
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };

beforeAll(async () => {
  api = await testRedis('runs-api');
  worker = await testRedis('runs-worker');
  runs = new RunLedger(api, keys);
  workerRuns = new RunLedger(worker, keys);
  log = new EventLog(api, keys);
  sessions = new SessionLedger(api, keys);
});

afterAll(async () => {
  await deleteKeys(api, prefix);
  await Promise.all([api.quit(), worker.quit()]);
});

/** The Lua-maintained projections equal the ones rebuilt from the stream. */
async function expectProjectionsMatchLog(ref: SessionRef, runIds: string[]): Promise<void> {
  const events = await log.history(ref);
  for (const runId of runIds) expect(await runs.get(ref, runId)).toEqual(rebuildRun(ref, runId, events));
  expect(await runs.transcript(ref)).toEqual(rebuildTranscript(events));
  expect(await sessions.get(ref)).toEqual(rebuildSession(events));
}

test('request → start → finish: events in order, projections equal the rebuilt ones', async () => {
  const ref = newRef();
  const runId = newRunId();
  expect(await runs.request(ref, runId, requestData('add', 'return [1, {}, []]'))).toEqual({ created: true });
  expect((await runs.get(ref, runId))?.status).toBe('requested');
  expect(await workerRuns.start(ref, runId, W)).toEqual({ started: true });
  const result = completed({ list: [], big: 2 ** 53 + 2, text: 'a\u2028b\ud800' });
  const { eventId } = await workerRuns.finish(ref, runId, { epoch: 1, type: 'run.completed', result });

  const { events } = await log.read(ref, { limit: 100 });
  expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.completed']);
  expect(events[2].id).toBe(eventId);
  expect(events[2].data).toEqual({ result });
  expect(events.every((e) => e.runId === runId && !Number.isNaN(Date.parse(e.at)))).toBe(true);

  const view = await runs.get(ref, runId);
  expect(view).toMatchObject({ runId, sessionId: ref.sessionId, title: 'add', status: 'completed', owner: 'w-1', epoch: 1 });
  expect(view?.lastResult).toEqual(result);
  expect(view?.endedAt).toBe(events[2].at);
  expect(await runs.transcript(ref)).toEqual([
    {
      kind: 'input',
      call: 'exec',
      runId,
      at: events[0].at,
      input: { title: 'add', code: 'return [1, {}, []]', restartSafe: false, awaitResults: false },
    },
    { kind: 'result', call: 'exec', runId, at: events[2].at, result },
  ]);
  await expectProjectionsMatchLog(ref, [runId]);
});

test('run.requested records the whole spec: shell settings and agent too (the one source recovery reads)', async () => {
  const ref = newRef();
  const runId = newRunId();
  const shell = {
    backgroundMs: 1000,
    timeoutSeconds: 30,
    cleanupMs: 5000,
    maxOutputChars: 100,
    pendingMaxOutputChars: 50,
    inputWaitIdleMs: 200,
    notifyOnExit: true,
    notifyOnExitEmptySuccess: false,
  };
  await runs.request(ref, runId, { ...requestData('spec', 'return 1'), shell, agentId: 'agent-7' });
  const unagented = newRunId();
  await runs.request(ref, unagented, { ...requestData('none', 'return 2'), shell, agentId: null });
  const [first, second] = (await log.read(ref, { limit: 10 })).events;
  expect(first.data).toEqual({ ...requestData('spec', 'return 1'), shell, agentId: 'agent-7' });
  expect(second.data).toEqual({ ...requestData('none', 'return 2'), shell, agentId: null });
  // The transcript's input stays the cell's own fields.
  expect((await runs.transcript(ref))?.[0]).toMatchObject({
    input: { title: 'spec', code: 'return 1', restartSafe: false, awaitResults: false },
  });
  await expectProjectionsMatchLog(ref, [runId, unagented]);
});

test('park, resume (generic append) and expire keep projections equal to the log', async () => {
  const ref = newRef();
  const runId = newRunId();
  await runs.request(ref, runId, { ...requestData('park'), restartSafe: true });
  await workerRuns.start(ref, runId, W);
  await log.append(ref, untypedAppend({ type: 'tool.called', runId, epoch: 1, data: { id: 'bridge:yield:1', input: [] } }));
  const park = { type: 'run.parked', runId, epoch: 1, data: { expiresAt: '2030-01-01T00:00:00.000Z', result: waiting(runId) } } as const;
  const parked = await log.append(ref, untypedAppend(park));
  expect((await runs.get(ref, runId))?.status).toBe('waiting');
  // The same park again (its reply was lost) writes nothing and answers the first one's id.
  expect(await log.append(ref, untypedAppend(park))).toEqual(parked);
  expect((await log.history(ref)).filter((e) => e.type === 'run.parked')).toHaveLength(1);
  await log.append(ref, untypedAppend({ type: 'run.resumed', runId, epoch: 2, data: { workerId: 'w-2' } }));
  expect(await runs.get(ref, runId)).toMatchObject({ status: 'running', owner: 'w-2', epoch: 2, parkedAt: null });
  await expect(log.append(ref, { type: 'run.output', runId, epoch: 1, data: {} })).rejects.toBeInstanceOf(StaleEpochError);
  await log.append(ref, { type: 'run.expired', runId, epoch: 2, data: { reason: 'idle' } });
  const transcript = await runs.transcript(ref);
  expect(transcript?.map((e) => `${e.kind}:${e.call}`)).toEqual(['input:exec', 'result:exec']);
  await expectProjectionsMatchLog(ref, [runId]);
});

test('start on a finished or an abandoned run answers started:false and writes nothing', async () => {
  const ref = newRef();
  const finished = newRunId();
  const abandoned = newRunId();
  await runs.request(ref, finished, requestData());
  await workerRuns.start(ref, finished, W);
  await workerRuns.finish(ref, finished, { epoch: 1, type: 'run.failed', result: failed('boom') });
  await runs.request(ref, abandoned, requestData());
  expect(await runs.abandonUnstarted(ref, abandoned, failed('no worker'))).toEqual({ abandoned: true });
  const before = await log.history(ref);

  expect(await workerRuns.start(ref, finished, W)).toEqual({ started: false, status: 'failed' });
  expect(await workerRuns.start(ref, abandoned, W)).toEqual({ started: false, status: 'failed' });
  expect(await workerRuns.start(ref, newRunId(), W)).toEqual({ started: false, status: null });
  expect(await runs.abandonUnstarted(ref, finished, failed('late'))).toEqual({ abandoned: false, status: 'failed' });
  expect(await log.history(ref)).toEqual(before);
  await expectProjectionsMatchLog(ref, [finished, abandoned]);
});

test("a run abandoned before it started answers its request's caller at once; a hash keeps that channel only while the run waits", async () => {
  const ref = newRef();
  const channel = keys.reply('api-abandon');
  const longChannel = `${channel}:${'x'.repeat(64)}`;
  const subscriber = await testRedis('runs-replies');
  const heard: unknown[] = [];
  subscriber.on('smessage', (_channel: string, message: string) => heard.push(JSON.parse(message)));
  await subscriber.ssubscribe(channel, longChannel);
  try {
    const abandoned = newRunId();
    const claimed = newRunId();
    await runs.request(ref, abandoned, requestData(), { replyTo: channel });
    await runs.request(ref, claimed, requestData(), { replyTo: channel });
    expect(await api.hget(keys.run(ref, abandoned), 'replyTo')).toBe(channel);
    expect(await workerRuns.start(ref, claimed, W)).toEqual({ started: true });
    expect(await api.hexists(keys.run(ref, claimed), 'replyTo')).toBe(0);

    const aborted = failed('code mode execution aborted', 'aborted');
    expect(await runs.abandonUnstarted(ref, abandoned, aborted)).toEqual({ abandoned: true });
    expect(await runs.abandonUnstarted(ref, claimed, aborted)).toEqual({ abandoned: false, status: 'running' });
    await waitFor(() => heard.length > 0);
    expect(heard).toEqual([{ kind: 'result', runId: abandoned, result: aborted }]);
    expect(await api.hexists(keys.run(ref, abandoned), 'replyTo')).toBe(0);

    // The exec abandoning its own run answers it itself: nothing is published.
    const byItsCaller = newRunId();
    await runs.request(ref, byItsCaller, requestData(), { replyTo: channel });
    expect(await runs.abandonUnstarted(ref, byItsCaller, failed('not started'), undefined, { byItsCaller: true })).toEqual({
      abandoned: true,
    });
    // A channel past a small hash value (a long key prefix) is not kept, and the finished run's
    // record keeps no channel (lua/includes/run-record.lua).
    const unkept = newRunId();
    await runs.request(ref, unkept, requestData(), { replyTo: longChannel });
    expect(await api.hexists(keys.run(ref, unkept), 'replyTo')).toBe(0);
    await runs.abandonUnstarted(ref, unkept, aborted);
    expect(await api.exists(keys.run(ref, unkept))).toBe(0);
    expect(recordFields((await api.hget(keys.pastRuns(ref), pastField(unkept))) ?? '')).toMatchObject({ status: 'failed' });
    expect(recordFields((await api.hget(keys.pastRuns(ref), pastField(abandoned))) ?? '')).not.toHaveProperty('replyTo');
    // A message on either channel would have arrived before this one, published after them.
    await api.spublish(channel, JSON.stringify('last'));
    await waitFor(() => heard.length > 1);
    expect(heard).toEqual([{ kind: 'result', runId: abandoned, result: aborted }, 'last']);
    await expectProjectionsMatchLog(ref, [abandoned, claimed, byItsCaller, unkept]);
  } finally {
    await subscriber.quit();
  }
});

async function waitFor(done: () => boolean, withinMs = 2000): Promise<void> {
  const until = Date.now() + withinMs;
  while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
}

test('a claim sent again with its token (its reply was lost) answers started, once; another claim does not', async () => {
  const ref = newRef();
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  expect(await workerRuns.start(ref, runId, { ...W, claimToken: 'c-1' })).toEqual({ started: true });
  expect(await workerRuns.start(ref, runId, { ...W, claimToken: 'c-1' })).toEqual({ started: true });
  expect(await workerRuns.start(ref, runId, { ...W, claimToken: 'c-2' })).toEqual({ started: false, status: 'running' });
  expect(await workerRuns.start(ref, runId, W)).toEqual({ started: false, status: 'running' });
  expect((await log.history(ref)).map((e) => e.type)).toEqual(['run.requested', 'run.started']);
  await expectProjectionsMatchLog(ref, [runId]);
});

test('an end that claims (SPEC §13): run.started then the terminal event, projections as a claim then an end', async () => {
  const ref = newRef();
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  const result = completed(3);
  const { eventId } = await workerRuns.finish(ref, runId, { epoch: 1, type: 'run.completed', result, claimedBy: 'w-1' });
  const events = await log.history(ref);
  expect(events.map((e) => [e.type, e.epoch, e.data])).toEqual([
    ['run.requested', 0, expect.anything()],
    ['run.started', 1, { workerId: 'w-1', epoch: 1 }],
    ['run.completed', 1, { result }],
  ]);
  expect(events[2].id).toBe(eventId);
  expect(await runs.get(ref, runId)).toMatchObject({ status: 'completed', owner: 'w-1', epoch: 1, lastResult: result });
  await expectProjectionsMatchLog(ref, [runId]);
  // Its reply lost, sent again: the end it wrote, answered as already ended, nothing written twice.
  await expect(workerRuns.finish(ref, runId, { epoch: 1, type: 'run.completed', result, claimedBy: 'w-1' })).rejects.toBeInstanceOf(
    RunAlreadyEndedError,
  );
  expect(await log.history(ref)).toEqual(events);
});

test('an end that claims declines, writing nothing, a run abandoned, claimed by another worker or not recorded', async () => {
  const ref = newRef();
  const abandoned = newRunId();
  const taken = newRunId();
  await runs.request(ref, abandoned, requestData());
  await runs.abandonUnstarted(ref, abandoned, failed('no worker started the cell within its budget; it was not run.'));
  await runs.request(ref, taken, requestData());
  await workerRuns.start(ref, taken, { ...W, workerId: 'w-2' });
  const before = await log.history(ref);
  const end = (runId: string) => workerRuns.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1), claimedBy: 'w-1' });

  await expect(end(abandoned)).rejects.toEqual(new RunNotStartedError(abandoned, 'failed'));
  await expect(end(taken)).rejects.toEqual(new RunNotStartedError(taken, 'running'));
  const absent = newRunId();
  await expect(end(absent)).rejects.toEqual(new RunNotStartedError(absent, null));
  expect(await log.history(ref)).toEqual(before);
  await expectProjectionsMatchLog(ref, [abandoned, taken]);
});

test('an end that claims races the API abandoning the run: exactly one wins, 50 times', async () => {
  const ref = newRef();
  for (let i = 0; i < 50; i++) {
    const runId = newRunId();
    await runs.request(ref, runId, requestData());
    const [ended, abandoned] = await Promise.allSettled([
      workerRuns.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(i), claimedBy: 'w-1' }),
      runs.abandonUnstarted(ref, runId, failed('no worker started the cell within its budget; it was not run.')),
    ]);
    const won = ended.status === 'fulfilled';
    if (!won) expect(ended.reason).toBeInstanceOf(RunNotStartedError);
    expect(abandoned).toEqual({ status: 'fulfilled', value: won ? { abandoned: false, status: 'completed' } : { abandoned: true } });
    const types = (await log.history(ref)).filter((e) => e.runId === runId).map((e) => e.type);
    expect(types).toEqual(won ? ['run.requested', 'run.started', 'run.completed'] : ['run.requested', 'run.failed']);
  }
});

test('abandonUnstarted races start: exactly one wins, 50 times', async () => {
  const ref = newRef();
  for (let i = 0; i < 50; i++) {
    const runId = newRunId();
    await runs.request(ref, runId, requestData());
    const [started, abandoned] = await Promise.all([
      workerRuns.start(ref, runId, W),
      runs.abandonUnstarted(ref, runId, failed('no worker started the cell within its budget; it was not run.')),
    ]);
    expect(Number(started.started) + Number(abandoned.abandoned)).toBe(1);
    const types = (await log.history(ref)).filter((e) => e.runId === runId).map((e) => e.type);
    expect(types).toEqual(started.started ? ['run.requested', 'run.started'] : ['run.requested', 'run.failed']);
  }
});

test('finish twice → RunAlreadyEndedError and exactly one terminal event', async () => {
  const ref = newRef();
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await workerRuns.start(ref, runId, W);
  const outcomes = await Promise.allSettled([
    workerRuns.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) }),
    workerRuns.finish(ref, runId, { epoch: 1, type: 'run.failed', result: failed('x') }),
  ]);
  expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
  const rejected = outcomes.find((o) => o.status === 'rejected');
  expect(rejected?.reason).toBeInstanceOf(RunAlreadyEndedError);
  await expect(workerRuns.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(2) })).rejects.toMatchObject({
    code: 'conflict',
    status: 'completed',
  });
  await expect(log.append(ref, { type: 'run.lost', runId, epoch: 1, data: { reason: 'x' } })).rejects.toBeInstanceOf(RunAlreadyEndedError);
  const terminal = (await log.history(ref)).filter((e) => ['run.completed', 'run.failed', 'run.expired', 'run.lost'].includes(e.type));
  expect(terminal).toHaveLength(1);
  expect((await runs.transcript(ref))?.filter((e) => e.kind === 'result')).toHaveLength(1);
});

test('a write with an epoch below the stored one is rejected (fencing)', async () => {
  const ref = newRef();
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await workerRuns.start(ref, runId, { ...W, epoch: 2 });
  const before = await log.history(ref);
  const stale = workerRuns.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
  await expect(stale).rejects.toBeInstanceOf(StaleEpochError);
  await expect(stale).rejects.toMatchObject({ runId, epoch: 1, storedEpoch: 2 });
  expect(await log.history(ref)).toEqual(before);
  await workerRuns.finish(ref, runId, { epoch: 2, type: 'run.completed', result: completed(1) });
  expect((await runs.get(ref, runId))?.status).toBe('completed');
});

test('idempotency key: a repeat appends nothing and answers the first runId', async () => {
  const ref = newRef();
  const first = newRunId();
  expect(await runs.request(ref, first, requestData(), { idempotencyKey: 'k:1' })).toEqual({ created: true });
  expect(await runs.request(ref, newRunId(), requestData(), { idempotencyKey: 'k:1' })).toEqual({ created: false, runId: first });
  expect(await runs.request(ref, newRunId(), requestData(), { idempotencyKey: 'k:2' })).toEqual({ created: true });
  const events = await log.history(ref);
  expect(events.filter((e) => e.type === 'run.requested')).toHaveLength(2);
  expect(events[0].data.idempotencyKey).toBe('k:1');
  const ttl = await api.ttl(keys.idempotency(ref, 'k:1'));
  expect(ttl).toBeGreaterThan(86_000);
  expect((await sessions.get(ref))?.counts.runs).toBe(2);
  // Same key in another session is another scope.
  expect(await runs.request(newRef(), newRunId(), requestData(), { idempotencyKey: 'k:1' })).toEqual({ created: true });
});

test('idempotency key: a run abandoned unstarted gives its key back, so a repeat runs the cell; a started one keeps it', async () => {
  const ref = newRef();
  const first = newRunId();
  await runs.request(ref, first, requestData(), { idempotencyKey: 'k:never-ran' });
  expect(await runs.abandonUnstarted(ref, first, failed('no worker'), 'k:never-ran')).toEqual({ abandoned: true });
  const second = newRunId();
  expect(await runs.request(ref, second, requestData(), { idempotencyKey: 'k:never-ran' })).toEqual({ created: true });
  // The second run started: abandoning declines, and the key still answers the second run.
  await workerRuns.start(ref, second, W);
  expect(await runs.abandonUnstarted(ref, second, failed('late'), 'k:never-ran')).toEqual({ abandoned: false, status: 'running' });
  expect(await runs.request(ref, newRunId(), requestData(), { idempotencyKey: 'k:never-ran' })).toEqual({ created: false, runId: second });
  // A key that names another run is left alone.
  const third = newRunId();
  await runs.request(ref, third, requestData());
  await runs.abandonUnstarted(ref, third, failed('no worker'), 'k:never-ran');
  expect(await runs.request(ref, newRunId(), requestData(), { idempotencyKey: 'k:never-ran' })).toEqual({ created: false, runId: second });
});

test('a request resent after its reply was lost answers created and writes nothing twice; finish of an unknown run', async () => {
  // What ioredis resends once a failover is over: the same command, which already ran.
  const ref = newRef();
  const runId = newRunId();
  expect(await runs.request(ref, runId, requestData())).toEqual({ created: true });
  expect(await runs.request(ref, runId, requestData())).toEqual({ created: true });
  const keyed = newRunId();
  const opts = { idempotencyKey: 'k:resent' };
  expect(await runs.request(ref, keyed, requestData(), opts)).toEqual({ created: true });
  expect(await runs.request(ref, keyed, requestData(), opts)).toEqual({ created: true });
  // Another request with the key still answers the first run.
  expect(await runs.request(ref, newRunId(), requestData(), opts)).toEqual({ created: false, runId: keyed });
  expect((await log.history(ref)).filter((e) => e.type === 'run.requested').map((e) => e.runId)).toEqual([runId, keyed]);
  await expect(workerRuns.finish(ref, newRunId(), { epoch: 1, type: 'run.completed', result: completed(1) })).rejects.toBeInstanceOf(
    RunNotFoundError,
  );
  expect(await runs.get(ref, newRunId())).toBeNull();
});

test('reject writes exec.rejected and transcript input + result entries', async () => {
  const ref = newRef();
  expect(await runs.transcript(ref)).toBeNull();
  const input = { title: '', code: 'ls -la', extra: [[], {}], n: 2 ** 60 };
  const refused = failed('title must be a non-empty string.', 'invalid_input');
  const result = await runs.reject(ref, 'exec', input, refused);
  expect(result).toEqual({ ...refused, repair: { allowed: true, remainingAttempts: 1, reason: REPAIR_REASONS.allowed } });
  const waitRefused = failed('runId must be a non-empty string.', 'invalid_input');
  expect(await runs.reject(ref, 'wait', undefined, waitRefused)).toEqual(waitRefused);
  const events = await log.history(ref);
  expect(events.map((e) => e.type)).toEqual(['exec.rejected', 'exec.rejected']);
  expect(events[0].runId).toBeUndefined();
  expect(events[0].data).toEqual({ call: 'exec', input: JSON.parse(JSON.stringify(input)), result });
  expect(events[1].data).toEqual({ call: 'wait', input: null, result: waitRefused });
  const transcript = await runs.transcript(ref);
  expect(transcript?.map((e) => [e.kind, e.call, e.runId])).toEqual([
    ['input', 'exec', null],
    ['result', 'exec', null],
    ['input', 'wait', null],
    ['result', 'wait', null],
  ]);
  expect(transcript?.[0]).toMatchObject({ input: JSON.parse(JSON.stringify(input)) });
  await expectProjectionsMatchLog(ref, []);
});

test('sessions are isolated across tenants with the same sid', async () => {
  const sid = `shared-${n++}`;
  const a: SessionRef = { tenant: 'tenant-a', sessionId: sid };
  const b: SessionRef = { tenant: 'tenant_b', sessionId: sid };
  const runId = newRunId();
  await runs.request(a, runId, requestData('only in a'));
  expect(await runs.get(b, runId)).toBeNull();
  expect(await runs.transcript(b)).toBeNull();
  expect(await log.exists(b)).toBe(false);
  expect((await log.read(b, { limit: 10 })).events).toEqual([]);
  expect(await workerRuns.start(b, runId, W)).toEqual({ started: false, status: null });
  expect((await runs.get(a, runId))?.status).toBe('requested');
});

test('request with the settings version it read: refused, writing nothing, once the session was configured since', async () => {
  const ref = newRef();
  expect((await sessions.settings(ref)).version).toBe('0');
  const first = newRunId();
  expect(await runs.request(ref, first, requestData(), { settingsVersion: '0' })).toEqual({ created: true });

  await sessions.configure(ref, { codeMode: { timeoutMs: 700 } });
  const second = newRunId();
  expect(await runs.request(ref, second, requestData(), { settingsVersion: '0' })).toEqual({ created: false, settingsChanged: true });
  expect(await runs.get(ref, second)).toBeNull();
  expect((await log.history(ref)).filter((e) => e.type === 'run.requested').map((e) => e.runId)).toEqual([first]);

  const { settings, version } = await sessions.settings(ref);
  expect([settings?.codeMode, version]).toEqual([{ timeoutMs: 700 }, '1']);
  expect(await runs.request(ref, second, requestData(), { settingsVersion: version })).toEqual({ created: true });
});

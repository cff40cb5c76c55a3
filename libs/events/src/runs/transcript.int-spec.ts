import type { Redis } from 'ioredis';
import type { CodeModeResult, SessionRef, TranscriptEntry } from '@codemode/contracts';
import { EventLog } from '../log/event-log';
import type { LoggedEvent } from '../log/event-encoding';
import { KeySpace } from '../platform/keys';
import { rebuildTranscript } from '../log/projections/rebuild-transcript';
import { ScriptLoader } from '../platform/script-loader';
import { SessionLedger } from '../ledgers/session-ledger';
import { RunLedger } from './run-ledger';
import { completed, deleteKeys, failed, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

const prefix = testPrefix('transcript');
const keys = new KeySpace(prefix);
/** One second of retention, so a test can outwait it. */
const RETENTION_MS = 1000;
const shortRetention = ScriptLoader.withSettings({ retentionSeconds: RETENTION_MS / 1000 });
let redis: Redis;
let runs: RunLedger;
let shortRuns: RunLedger;
let log: EventLog;
let sessions: SessionLedger;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `t-${++n}` });
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };

beforeAll(async () => {
  redis = await testRedis('transcript');
  runs = new RunLedger(redis, keys);
  shortRuns = new RunLedger(redis, keys, shortRetention);
  log = new EventLog(redis, keys);
  sessions = new SessionLedger(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const outwaitRetention = () => new Promise((resolve) => setTimeout(resolve, RETENTION_MS + 100));

/** A run started and parked at epoch 1 by w-1. */
async function parkedRun(ref: SessionRef, ledger: RunLedger, title: string): Promise<string> {
  const runId = newRunId();
  await ledger.request(ref, runId, requestData(title, `return await ${title}()`));
  await ledger.start(ref, runId, W);
  await park(ref, ledger, runId);
  return runId;
}

async function park(ref: SessionRef, ledger: RunLedger, runId: string): Promise<void> {
  const data = { result: waiting(runId), expiresAt: new Date(Date.now() + 60_000).toISOString() };
  await ledger.append(ref, untypedAppend({ type: 'run.parked', runId, epoch: 1, data }));
}

/** A wait on a parked run, as wait.service and the owner do it: reserve, then resume with the wait's input. */
async function resume(ref: SessionRef, ledger: RunLedger, runId: string, token: string): Promise<void> {
  expect((await ledger.reserveResume(ref, runId, token, 10_000)).reserved).toBe(true);
  expect(await ledger.resume(ref, runId, { ...W, token, input: { runId, token } })).toBe(true);
}

/** The `at` of the one event of `type` (of `runId`, else the nth of that type). */
function atOf(events: LoggedEvent[], type: string, runId?: string, nth = 0): string {
  const found = events.filter((e) => e.type === type && (runId === undefined || e.runId === runId));
  expect(found.length).toBeGreaterThan(nth);
  return found[nth].at;
}

const input = (title: string) => ({ title, code: `return await ${title}()`, restartSafe: false, awaitResults: false });

test('a generated history: each exec, wait, refusal and result gives the entry it always gave, in log order', async () => {
  const ref = newRef();
  // A completed run whose result JSON holds what cjson would mangle (lone surrogate, 2^53+2, empty arrays).
  const done = newRunId();
  const doneResult = completed({ list: [], big: 2 ** 53 + 2, text: 'a\u2028b\ud800', nested: [{}, []] });
  await runs.request(ref, done, requestData('done', 'return await done()'));
  await runs.start(ref, done, W);
  await runs.append(ref, untypedAppend({ type: 'tool.called', runId: done, epoch: 1, data: { callId: 'c1', tool: 'x.y' } }));
  // More events between its input and its result than one read window takes (transcript-reader.ts).
  for (let i = 0; i < 40; i++) await runs.append(ref, { type: 'run.output', runId: done, epoch: 1, data: { text: `line ${i}` } });
  await runs.finish(ref, done, { epoch: 1, type: 'run.completed', result: doneResult });
  // A failed run, and one abandoned before any worker started it.
  const broke = newRunId();
  await runs.request(ref, broke, requestData('broke', 'return await broke()'));
  await runs.start(ref, broke, W);
  const brokeResult = failed('boom');
  await runs.finish(ref, broke, { epoch: 1, type: 'run.failed', result: brokeResult });
  const unstarted = newRunId();
  await runs.request(ref, unstarted, requestData('unstarted', 'return await unstarted()'));
  const unstartedResult = failed('no worker took it');
  expect(await runs.abandonUnstarted(ref, unstarted, unstartedResult)).toEqual({ abandoned: true });
  // A run that parks, is waited on, parks again, is waited on again and completes.
  const legs = await parkedRun(ref, runs, 'legs');
  await resume(ref, runs, legs, 'tok-1');
  await park(ref, runs, legs);
  await resume(ref, runs, legs, 'tok-2');
  await runs.finish(ref, legs, { epoch: 1, type: 'run.completed', result: completed('legs done') });
  // Refused calls: an exec (a failed cell, with its repair) and a wait (the run untouched).
  const refusedExec = await runs.reject(ref, 'exec', { code: 42 }, failed('code must be a string', 'invalid_input'));
  const refusedWait = failed('runId is required', 'invalid_input');
  await runs.reject(ref, 'wait', { runId: 7 }, refusedWait);
  // A parked run that is lost with a result, and one that expires (no result: no entry).
  const lost = await parkedRun(ref, runs, 'lost');
  const lostResult = failed('the worker went away');
  await runs.append(ref, { type: 'run.lost', runId: lost, epoch: 1, data: { reason: 'gone', result: lostResult } });
  const expired = await parkedRun(ref, runs, 'expired');
  await runs.append(ref, { type: 'run.expired', runId: expired, epoch: 1, data: { reason: 'too long' } });

  const events = await log.history(ref);
  const at = (type: string, runId?: string, nth = 0) => atOf(events, type, runId, nth);
  const result = (call: 'exec' | 'wait', runId: string | null, when: string, r: CodeModeResult): TranscriptEntry => ({
    kind: 'result',
    call,
    runId,
    at: when,
    result: r,
  });
  const expected: TranscriptEntry[] = [
    { kind: 'input', call: 'exec', runId: done, at: at('run.requested', done), input: input('done') },
    result('exec', done, at('run.completed', done), doneResult),
    { kind: 'input', call: 'exec', runId: broke, at: at('run.requested', broke), input: input('broke') },
    result('exec', broke, at('run.failed', broke), brokeResult),
    { kind: 'input', call: 'exec', runId: unstarted, at: at('run.requested', unstarted), input: input('unstarted') },
    result('exec', unstarted, at('run.failed', unstarted), unstartedResult),
    { kind: 'input', call: 'exec', runId: legs, at: at('run.requested', legs), input: input('legs') },
    result('exec', legs, at('run.parked', legs), waiting(legs)),
    { kind: 'input', call: 'wait', runId: legs, at: at('run.resumed', legs), input: { runId: legs, token: 'tok-1' } },
    result('wait', legs, at('run.parked', legs, 1), waiting(legs)),
    { kind: 'input', call: 'wait', runId: legs, at: at('run.resumed', legs, 1), input: { runId: legs, token: 'tok-2' } },
    result('wait', legs, at('run.completed', legs), completed('legs done')),
    { kind: 'input', call: 'exec', runId: null, at: at('exec.rejected', undefined, 0), input: { code: 42 } },
    result('exec', null, at('exec.rejected', undefined, 0), refusedExec),
    { kind: 'input', call: 'wait', runId: null, at: at('exec.rejected', undefined, 1), input: { runId: 7 } },
    result('wait', null, at('exec.rejected', undefined, 1), refusedWait),
    { kind: 'input', call: 'exec', runId: lost, at: at('run.requested', lost), input: input('lost') },
    result('exec', lost, at('run.parked', lost), waiting(lost)),
    result('exec', lost, at('run.lost', lost), lostResult),
    { kind: 'input', call: 'exec', runId: expired, at: at('run.requested', expired), input: input('expired') },
    result('exec', expired, at('run.parked', expired), waiting(expired)),
  ];
  const transcript = await runs.transcript(ref);
  // Byte for byte, key order included: what GET …/transcript serializes.
  expect(JSON.stringify(transcript)).toBe(JSON.stringify(expected));
  expect(transcript).toEqual(rebuildTranscript(events));
  expect((await sessions.get(ref))?.counts.transcriptEntries).toBe(expected.length);
});

test('a never-created session has no transcript; a session with no cell yet has an empty one', async () => {
  const ref = newRef();
  expect(await runs.transcript(ref)).toBeNull();
  await sessions.configure(ref, { agentId: 'a-1' });
  expect(await runs.transcript(ref)).toEqual([]);
  expect((await sessions.get(ref))?.counts.transcriptEntries).toBe(0);
});

test('retention cuts a waited-on run between its wait and its end: its result still answers to wait', async () => {
  const ref = newRef();
  const runId = await parkedRun(ref, shortRuns, 'slow');
  await resume(ref, shortRuns, runId, 'tok-1');
  await outwaitRetention();
  // Its end trims everything older than the retention: the request, the park and the wait.
  await shortRuns.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed('late') });
  const events = await log.history(ref);
  expect(events.map((e) => e.type)).toEqual(['run.completed']);
  expect(await shortRuns.transcript(ref)).toEqual([{ kind: 'result', call: 'wait', runId, at: events[0].at, result: completed('late') }]);
  expect((await sessions.get(ref))?.counts.transcriptEntries).toBe(1);
});

test('retention: the transcript loses what the log lost, and its count with it', async () => {
  const ref = newRef();
  const old = newRunId();
  await shortRuns.request(ref, old, requestData('old', 'return await old()'));
  await shortRuns.start(ref, old, W);
  await shortRuns.finish(ref, old, { epoch: 1, type: 'run.completed', result: completed(1) });
  await shortRuns.reject(ref, 'wait', { runId: 1 }, failed('runId is required', 'invalid_input'));
  expect((await sessions.get(ref))?.counts.transcriptEntries).toBe(4);
  await outwaitRetention();
  const fresh = newRunId();
  await shortRuns.request(ref, fresh, requestData('fresh', 'return await fresh()'));
  await shortRuns.start(ref, fresh, W);
  await shortRuns.finish(ref, fresh, { epoch: 1, type: 'run.completed', result: completed(2) });

  const events = await log.history(ref);
  expect(events.map((e) => e.runId)).toEqual([fresh, fresh, fresh]);
  const transcript = await shortRuns.transcript(ref);
  expect(transcript).toEqual(rebuildTranscript(events));
  expect(transcript?.map((e) => [e.kind, e.runId])).toEqual([
    ['input', fresh],
    ['result', fresh],
  ]);
  expect((await sessions.get(ref))?.counts.transcriptEntries).toBe(2);
});

/** A finished exec: input and result entries. */
async function finishedExec(ref: SessionRef, ledger: RunLedger, title: string): Promise<string> {
  const runId = newRunId();
  await ledger.request(ref, runId, requestData(title, `return await ${title}()`));
  await ledger.start(ref, runId, W);
  await ledger.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(title) });
  return runId;
}

/**
 * Turns the list's last `count` elements into what a release before issue 40 wrote for them: the
 * entries themselves, as JSON in the key order of transcript_entry (lua/includes/transcript.lua then).
 */
async function asLegacyEntries(ref: SessionRef, ledger: RunLedger, count: number): Promise<void> {
  const entries = (await ledger.transcript(ref)) ?? [];
  const key = keys.transcript(ref);
  await redis.ltrim(key, 0, -count - 1);
  await redis.rpush(key, ...entries.slice(-count).map((entry) => JSON.stringify(entry)));
}

test('a legacy transcript list: its entries first, then the derived ones, each once, in order; an old writer in between keeps its place', async () => {
  const ref = newRef();
  const before = await finishedExec(ref, runs, 'before1');
  await runs.reject(ref, 'wait', { runId: 'x' }, failed('runId is required', 'invalid_input'));
  // The list as the earlier release left it: four whole entries.
  await asLegacyEntries(ref, runs, 4);
  const legacy = await redis.lrange(keys.transcript(ref), 0, -1);
  expect(legacy.every((element) => element.startsWith('{"kind":'))).toBe(true);

  const after = await finishedExec(ref, runs, 'after1');
  // Mid-upgrade, an API of the earlier release refuses an exec: its two entries are whole again.
  await runs.reject(ref, 'exec', { code: 1 }, failed('code must be a string', 'invalid_input'));
  await asLegacyEntries(ref, runs, 2);
  const last = await parkedRun(ref, runs, 'after2');
  await resume(ref, runs, last, 'tok-1');
  await runs.finish(ref, last, { epoch: 1, type: 'run.failed', result: failed('late') });

  const elements = await redis.lrange(keys.transcript(ref), 0, -1);
  expect(elements.map((element) => element[0])).toEqual(['{', '{', '{', '{', 'i', 'r', '{', '{', 'i', 'r', 'i', 'r']);
  const events = await log.history(ref);
  const transcript = await runs.transcript(ref);
  expect(transcript).toEqual(rebuildTranscript(events));
  expect(transcript?.slice(0, 4)).toEqual(legacy.map((entry) => JSON.parse(entry) as unknown));
  expect(transcript?.map((e) => [e.kind, e.call, e.runId])).toEqual([
    ['input', 'exec', before],
    ['result', 'exec', before],
    ['input', 'wait', null],
    ['result', 'wait', null],
    ['input', 'exec', after],
    ['result', 'exec', after],
    ['input', 'exec', null],
    ['result', 'exec', null],
    ['input', 'exec', last],
    ['result', 'exec', last],
    ['input', 'wait', last],
    ['result', 'wait', last],
  ]);
  expect((await sessions.get(ref))?.counts.transcriptEntries).toBe(12);
});

test('retention trims a legacy list and the marks after it alike: the transcript keeps what the log keeps', async () => {
  const ref = newRef();
  await finishedExec(ref, shortRuns, 'legacy');
  await asLegacyEntries(ref, shortRuns, 2);
  await finishedExec(ref, shortRuns, 'marked');
  await outwaitRetention();
  const kept = await parkedRun(ref, shortRuns, 'kept');
  await shortRuns.finish(ref, kept, { epoch: 1, type: 'run.completed', result: completed('kept') });

  const events = await log.history(ref);
  expect(new Set(events.map((e) => e.runId))).toEqual(new Set([kept]));
  const transcript = await shortRuns.transcript(ref);
  expect(transcript).toEqual(rebuildTranscript(events));
  expect(transcript?.map((e) => [e.kind, e.runId])).toEqual([
    ['input', kept],
    ['result', kept],
    ['result', kept],
  ]);
  expect(await redis.llen(keys.transcript(ref))).toBe(3);
  expect((await sessions.get(ref))?.counts.transcriptEntries).toBe(3);
});

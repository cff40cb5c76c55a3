import type { Redis } from 'ioredis';
import type { CodeModeResult, EventData, SessionRef } from '@codemode/contracts';
import { KeySpace } from '../platform/keys';
import { ScriptLoader } from '../platform/script-loader';
import { RunLedger } from './run-ledger';
import { StoredBytesLedger } from '../ledgers/stored-bytes-ledger';
import { EventLog, type AppendInput } from '../log/event-log';
import { PACKED_PREFIX } from '../log/event-packing';
import { endedFields } from '../log/projections/views';
import { completed, deleteKeys, failed, newRunId, requestData, storedEntries, storedRun, testPrefix, testRedis } from '../test-support';
import { pastField } from './run-record';

// The same histories written compact (data packed, ended hashes slim) and in full read the same
// through every reader.
const prefix = testPrefix('compact-runs');
const keys = new KeySpace(prefix);
let redis: Redis;
let packing: RunLedger;
let plain: RunLedger;
let log: EventLog;
let stored: StoredBytesLedger;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `pack-${++n}` });
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };

beforeAll(async () => {
  redis = await testRedis('packing');
  packing = new RunLedger(redis, keys);
  plain = new RunLedger(redis, keys, ScriptLoader.withSettings({ compactRuns: false }));
  log = new EventLog(redis, keys);
  stored = new StoredBytesLedger(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** Writes the same runs (same ids) through `runs` in a session of its own; answers what the readers read. */
async function history(runs: RunLedger, runIds: string[], results: CodeModeResult[]) {
  const ref = newRef();
  for (const [i, runId] of runIds.entries()) {
    await runs.request(ref, runId, { ...requestData(`cell ${i}`, `return ${i} // \ud800 €`), requestId: `req-${i}` });
    await runs.start(ref, runId, W);
    await runs.finish(ref, runId, { epoch: 1, type: results[i].status === 'failed' ? 'run.failed' : 'run.completed', result: results[i] });
  }
  const logged = await log.history(ref);
  const events = logged.map(({ id: _id, at: _at, ...event }) => event);
  const ats = logged.map((event) => [event.at, new Date(Number(event.id.split('-')[0])).toISOString()]);
  const views = await Promise.all(runIds.map(async (runId) => await runs.get(ref, runId)));
  const hashes = await Promise.all(runIds.map((runId) => storedRun(redis, keys, ref, runId)));
  const transcript = (await runs.transcript(ref))?.map((entry) => ({ ...entry, at: '' }));
  const terminal = (await log.history(ref)).filter((e) => e.type === 'run.completed' || e.type === 'run.failed');
  const resultsAt = await Promise.all(terminal.map((e) => runs.resultAt(ref, e.id)));
  const entries = await storedEntries(redis, keys, ref);
  const records = await Promise.all(runIds.map((runId) => redis.hstrlen(keys.pastRuns(ref), pastField(runId) as string)));
  const raw = entries.map(([, fields]) => fields[fields.indexOf('data') + 1]);
  const types = entries.map(([, fields]) => fields[fields.indexOf('type') + 1]);
  const atBytes = entries.reduce((sum, [, fields]) => sum + (fields.includes('at') ? fields[fields.indexOf('at') + 1].length : 0), 0);
  const ids = logged.map((event) => event.id);
  return { events, ids, ats, views, hashes, transcript, resultsAt, raw, types, atBytes, records, bytes: (await stored.measure(ref)).bytes };
}

function withoutTimes(view: Awaited<ReturnType<RunLedger['get']>>) {
  if (!view) return view;
  return { ...view, createdAt: '', startedAt: '', endedAt: '', updatedAt: '', sessionId: '' };
}

test('runs kept compact read exactly as runs kept in full, and keep fewer bytes', async () => {
  const runIds = [newRunId(), newRunId(), newRunId(), newRunId()];
  const results = [
    completed(2),
    completed({ text: 'a\u2028b\ud800', big: 2 ** 53 + 2, list: [] }),
    completed('x'.repeat(5000)),
    failed('the cell threw', 'invalid_input'),
  ];
  const packed = await history(packing, runIds, results);
  const spliced = await history(plain, runIds, results);

  expect(packed.events).toEqual(spliced.events);
  // The `at` a full entry keeps is the one a compact entry's id gives (the script writes both from one clock reading).
  for (const [kept, fromId] of spliced.ats) expect(kept).toBe(fromId);
  // A view's times are its events' `at`, however the hash keeps them.
  for (const [i, view] of packed.views.entries()) {
    expect([view?.createdAt, view?.startedAt, view?.endedAt]).toEqual([0, 1, 2].map((n) => packed.ats[3 * i + n][0]));
  }
  expect(packed.views.map(withoutTimes)).toEqual(spliced.views.map(withoutTimes));
  // A compact hash keeps neither the id nor updatedAt, nor restartSafe when false, and its times in
  // milliseconds; finished, what only a view reads is one field, `ended` (the worker's id in it).
  // The view reads them as the full hash holds them.
  for (const [i, stored] of packed.hashes.entries()) {
    expect(Object.keys(stored).sort()).toEqual(['ended', 'epoch', 'status', 'title']);
    expect(stored.ended).toMatch(/^[0-9a-z]{8},\d+,\d+,-\d+,[ru],w-1$/);
    const hash = { ...stored, ...endedFields(stored.ended) };
    expect([hash.runId, hash.updatedAt, spliced.hashes[i].runId]).toEqual([undefined, undefined, runIds[i]]);
    expect([hash.restartSafe, spliced.hashes[i].restartSafe]).toEqual([undefined, 'false']);
    expect([hash.owner, hash.replaySafe, hash.resultEvent]).toEqual([W.workerId, spliced.hashes[i].replaySafe, packed.ids[3 * i + 2]]);
    expect([hash.createdAt, hash.startedAt, hash.endedAt]).toEqual([0, 1, 2].map((n) => String(Date.parse(packed.ats[3 * i + n][0]))));
    expect(spliced.hashes[i].createdAt).toBe(spliced.ats[3 * i][0]);
    expect(packed.views[i]?.restartSafe).toBe(false);
    expect(spliced.hashes[i].updatedAt).toBe(spliced.hashes[i].endedAt);
    expect(packed.views[i]?.updatedAt).toBe(packed.views[i]?.endedAt);
    expect(packed.views[i]?.runId).toBe(runIds[i]);
  }
  expect(packed.transcript).toEqual(spliced.transcript);
  expect(packed.resultsAt).toEqual(spliced.resultsAt);
  expect(packed.resultsAt[1]).toEqual(results[1]);
  // Requests and small results packed; the 5,000-character result and the failure whose repair the
  // script writes into it kept as spliced; nothing packed by the plain writer.
  expect(packed.raw.map((data) => data.startsWith(PACKED_PREFIX))).toEqual([
    true,
    false,
    true,
    true,
    false,
    true,
    true,
    false,
    false,
    true,
    false,
    false,
  ]);
  expect(spliced.raw.some((data) => data.startsWith(PACKED_PREFIX))).toBe(false);
  // Compact entries carry `at` in their ids only; the full ones repeat it.
  expect([packed.atBytes, spliced.atBytes]).toEqual([0, 12 * '2026-12-05T07:53:39.509Z'.length]);
  // Compact entries keep their type as a code, and a claim's `run.started` data as the worker id's JSON.
  expect(packed.types).toEqual(['q', 's', 'c', 'q', 's', 'c', 'q', 's', 'c', 'q', 's', 'f']);
  expect(spliced.types.slice(0, 3)).toEqual(['run.requested', 'run.started', 'run.completed']);
  expect(packed.raw[1]).toBe(`~w${JSON.stringify(W.workerId)}`);
  expect(spliced.raw[1]).toBe(`{"workerId":${JSON.stringify(W.workerId)},"epoch":1}`);
  // The session's stored bytes count what is kept. In full: each entry's values and overhead (64),
  // and per run the share of its hash and runs index entry (RUN_OVERHEAD 512). Compact, a run is
  // its record: its length, and the share of its record's field and runs index entry (160).
  const length = (raw: string[]) => raw.reduce((sum, data) => sum + Buffer.byteLength(data), 0);
  const runIdBytes = spliced.raw.length * runIds[0].length;
  const fullLog = length(spliced.raw) + length(spliced.types) + spliced.atBytes + runIdBytes + spliced.raw.length * 64;
  expect(spliced.records).toEqual([0, 0, 0, 0]);
  expect(spliced.bytes - packed.bytes).toBe(
    fullLog + runIds.length * 512 - packed.records.reduce((a, b) => a + b, 0) - runIds.length * 160,
  );
  expect(length(spliced.raw) - length(packed.raw)).toBeGreaterThan(1500);
});

test("an entry whose id cannot carry its time (the stream's last id ahead of the clock) keeps its at", async () => {
  const ref = newRef();
  const ahead = Date.now() + 3_600_000;
  await redis.xadd(keys.events(ref), `${ahead}-0`, 'type', 'session.configured', 'runId', '', 'epoch', '0', 'data', '{}');
  const runId = newRunId();
  const before = Date.now();
  await packing.request(ref, runId, requestData('late clock', 'return 1'));
  const [id, fields] = (await redis.xrange(keys.events(ref), '-', '+')).at(-1)!;
  expect(Number(id.split('-')[0])).toBe(ahead);
  expect(fields).toContain('at');
  const requested = (await log.history(ref)).find((event) => event.type === 'run.requested');
  expect(Date.parse(requested!.at)).toBeGreaterThanOrEqual(before - 1000);
  expect(Date.parse(requested!.at)).toBeLessThan(ahead - 3_000_000);
  // The run's hash keeps the clock's time too, not its entry id's.
  expect((await packing.get(ref, runId))?.createdAt).toBe(requested!.at);
});

test('a run requested by a process writing in full and ended by one writing compact (a rolling upgrade) reads its times as its events give them', async () => {
  const ref = newRef();
  const runId = newRunId();
  await plain.request(ref, runId, requestData('upgrade', 'return 1'));
  await packing.start(ref, runId, W);
  await packing.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
  const hash = await storedRun(redis, keys, ref, runId);
  expect(hash.createdAt).toMatch(/Z$/);
  expect(hash.endedAt).toMatch(/^\d+$/);
  const ats = (await log.history(ref)).map((event) => event.at);
  const view = await packing.get(ref, runId);
  expect([view?.createdAt, view?.startedAt, view?.endedAt, view?.updatedAt]).toEqual([ats[0], ats[1], ats[2], ats[2]]);
  expect(await plain.get(ref, runId)).toEqual(view);
});

test('a restartSafe run kept compact keeps restartSafe, and reads it', async () => {
  const ref = newRef();
  const runId = newRunId();
  await packing.request(ref, runId, { ...requestData('safe', 'return 1'), restartSafe: true });
  expect(await redis.hget(keys.run(ref, runId), 'restartSafe')).toBe('true');
  expect((await packing.get(ref, runId))?.restartSafe).toBe(true);
});

test("tool calls' events kept compact read exactly as kept in full; only the shapes every call repeats are kept short", async () => {
  const fullLog = new EventLog(redis, keys, ScriptLoader.withSettings({ compactRuns: false }));
  const runId = newRunId();
  const odd = 'a|b"c\u2028\ud800';
  const called = (data: EventData<'tool.called'>): AppendInput => ({ type: 'tool.called', runId, epoch: 1, data });
  const settled = (data: EventData<'tool.settled'>): AppendInput => ({ type: 'tool.settled', runId, epoch: 1, data });
  const calls = [
    called({ callId: 'bridge:callValue:1', tool: 'ls', source: 'openclaw', inputBytes: 2, callKey: `${runId}:1` }),
    settled({ callId: 'bridge:callValue:1', tool: 'ls', ok: true, durationMs: 3, resultBytes: 43 }),
    called({ callId: 'bridge:namespace:2', tool: odd, source: 'mcp', inputBytes: 10, callKey: `${runId}:2` }),
    settled({ callId: 'bridge:namespace:2', tool: odd, ok: true, durationMs: 0, resultBytes: 2 }),
    // Shapes kept as they are: an input kept for replay, no call key, a failure, another run's key.
    called({ callId: 'bridge:callValue:3', tool: 'ls', source: 'openclaw', inputBytes: 2, input: { path: '.' }, callKey: `${runId}:3` }),
    called({ callId: 'bridge:callValue:4', tool: 'ls', source: 'openclaw', inputBytes: 2 }),
    settled({ callId: 'bridge:callValue:4', tool: 'ls', ok: false, durationMs: 1, error: 'no such file' }),
    called({ callId: 'bridge:callValue:5', tool: 'ls', source: 'openclaw', inputBytes: 2, callKey: 'cm_other:5' }),
  ];
  const written = async (runs: RunLedger, events: EventLog) => {
    const ref = newRef();
    await runs.request(ref, runId, requestData('t', 'return 1'));
    await runs.start(ref, runId, W);
    for (const result of await events.appendAll(ref, calls)) expect(result).not.toBeInstanceOf(Error);
    const entries = await redis.xrange(keys.events(ref), '-', '+');
    return {
      read: (await events.history(ref)).map(({ id: _id, at: _at, ...event }) => event),
      raw: entries.slice(2).map(([, fields]) => fields[fields.indexOf('data') + 1]),
    };
  };
  const compact = await written(packing, log);
  const full = await written(plain, fullLog);
  expect(compact.read).toEqual(full.read);
  expect(compact.read.slice(2).map((event) => event.data)).toEqual(calls.map((event) => event.data));
  expect(compact.raw.map((data) => data.slice(0, 2))).toEqual(['~t', '~s', '~t', '~s', '{"', '{"', '{"', '{"']);
  expect(full.raw.every((data) => data.startsWith('{"'))).toBe(true);
  expect(compact.raw[0]).toBe('~tcallValue:1|openclaw|2|1|"ls"');
});

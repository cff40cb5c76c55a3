import type { Redis } from 'ioredis';
import { toolSettledData, type SessionRef } from '@codemode/contracts';
import { EventLog, type AppendInput } from '../log/event-log';
import type { LoggedEvent } from '../log/event-encoding';
import { SessionLedger } from '../ledgers/session-ledger';
import { KeySpace } from '../platform/keys';
import { ScriptLoader } from '../platform/script-loader';
import { RunLedger } from './run-ledger';
import { pastField } from './run-record';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

// A run's live hash lists its log entries' ids (lua/includes/run-entries.lua), and its fold reads
// them by id whatever lies between them in the log; a run without a list to rely on is folded as
// before (run-record.int-spec.ts has the record itself).
const prefix = testPrefix('run-entries');
const keys = new KeySpace(prefix);
/** Two seconds of retention: a record holds a run whose life was at most half a second (retention / 4). */
const RETENTION_MS = 2000;
const SPAN_MS = RETENTION_MS / 4;
let redis: Redis;
let packing: RunLedger;
let plain: RunLedger;
let sessions: SessionLedger;
/** A record holds a run of up to 10 s here (40 s of retention): room for a test's many writes on a loaded machine. */
let wide: RunLedger;
let wideLog: EventLog;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `ent-${++n}` });
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  redis = await testRedis('run-entries');
  const scripts = ScriptLoader.withSettings({ retentionSeconds: RETENTION_MS / 1000 });
  packing = new RunLedger(redis, keys, scripts);
  plain = new RunLedger(redis, keys, ScriptLoader.withSettings({ retentionSeconds: RETENTION_MS / 1000, compactRuns: false }));
  sessions = new SessionLedger(redis, keys, scripts);
  const wideScripts = ScriptLoader.withSettings({ retentionSeconds: 40 });
  wide = new RunLedger(redis, keys, wideScripts);
  wideLog = new EventLog(redis, keys, wideScripts);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function folded(ref: SessionRef, runId: string): Promise<string | null> {
  expect(await redis.exists(keys.run(ref, runId))).toBe(0);
  return redis.hget(keys.pastRuns(ref), pastField(runId));
}

/** A tool call's two events, as a worker writes them together (append-events.lua: one batch). */
function toolCall(runId: string): AppendInput[] {
  return [
    { type: 'tool.called', runId, epoch: 1, data: { callId: 'c1', tool: 'ls', source: 'openclaw', inputBytes: 2, input: {} } },
    {
      type: 'tool.settled',
      runId,
      epoch: 1,
      data: toolSettledData({ callId: 'c1', tool: 'ls', durationMs: 1 }, { ok: true, value: { entries: ['f'] } }, true),
    },
  ];
}

/** Ends `runId` after the events the test gave it and expects the feed to read what it read before. */
async function endAndCompare(ref: SessionRef, runId: string): Promise<LoggedEvent[]> {
  const live = await wideLog.history(ref);
  const end = await wide.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed('mine') });
  expect(await folded(ref, runId)).toMatch(/^A/);
  const all = await wideLog.history(ref);
  expect(all.slice(0, -1)).toEqual(live);
  expect(all.at(-1)).toMatchObject({ id: end.eventId, type: 'run.completed', runId });
  expect((await sessions.get(ref))?.counts.events).toBe(all.length);
  return all;
}

test('a run folds with its entries whatever lies between them in the log: the fold reads the ids its hash lists', async () => {
  const ref = newRef();
  const mine = newRunId();
  await wide.request(ref, mine, requestData('mine'));
  // 80 entries of 40 other runs between its request and its start: more than a fold reads through (64).
  const others = Array.from({ length: 40 }, () => newRunId());
  for (const other of others) {
    await wide.request(ref, other, requestData('other'));
    await wide.start(ref, other, W);
  }
  await wide.start(ref, mine, W);
  await wideLog.append(ref, untypedAppend({ type: 'shell.output', data: { n: 1 } }));
  await wideLog.appendAll(ref, toolCall(mine));
  await wide.append(ref, { type: 'run.output', runId: mine, epoch: 1, data: { text: 'out' } });
  const all = await endAndCompare(ref, mine);
  expect(all.filter((e) => e.runId === mine).map((e) => e.type)).toEqual([
    'run.requested',
    'run.started',
    'tool.called',
    'tool.settled',
    'run.output',
    'run.completed',
  ]);
  // Its six entries left the stream; the other runs' and the session's stay.
  expect(await redis.xlen(keys.events(ref))).toBe(2 * others.length + 1);
});

test.each([
  ['its list grew past 64 bytes (30 outputs)', 'outgrown'],
  ['it was requested by an earlier release, which kept no list', 'absent'],
  ['its list cannot be read', 'unreadable'],
] as const)('a run whose hash lists no ids to rely on is folded from the log as before: %s', async (_, list) => {
  const ref = newRef();
  const runId = newRunId();
  await wide.request(ref, runId, requestData());
  if (list === 'absent') await redis.hdel(keys.run(ref, runId), 'entries');
  if (list === 'unreadable') await redis.hset(keys.run(ref, runId), 'entries', 'x 1');
  await wide.start(ref, runId, W);
  for (let i = 0; i < 30; i++) await wide.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: `o${i}` } });
  expect(await redis.hget(keys.run(ref, runId), 'entries')).toBe({ outgrown: '+', absent: null, unreadable: 'x 1' }[list]);
  await endAndCompare(ref, runId);
  expect(await redis.xlen(keys.events(ref))).toBe(0);
});

/** The ids a run's `entries` list names (run-entries.lua), as the fold reads them. */
function listedIds(listed: string): string[] {
  const [first, ...rest] = listed.split(' ');
  const firstMs = Number(first.split('-')[0]);
  return [
    first,
    ...rest.map((token) => {
      const [after, seq] = token.split('-');
      return `${firstMs + parseInt(after, 36)}-${seq === undefined ? 0 : parseInt(seq, 36)}`;
    }),
  ];
}

async function expectListed(ref: SessionRef, runId: string): Promise<void> {
  const inLog = (await redis.xrange(keys.events(ref), '-', '+')).filter(([, fields]) => fields[3] === runId).map(([id]) => id);
  expect(listedIds((await redis.hget(keys.run(ref, runId), 'entries')) ?? '')).toEqual(inLog);
}

test('a run’s list names each of its entries through start, park, resume, release and take-over', async () => {
  const ref = newRef();
  const [held, taken] = [newRunId(), newRunId()];
  const parked = (runId: string, epoch: number) =>
    wide.append(ref, untypedAppend({ type: 'run.parked', runId, epoch, data: { result: waiting(runId) } }));
  await wide.request(ref, held, requestData('held'));
  await wide.request(ref, taken, { ...requestData('taken'), restartSafe: true });
  await wide.start(ref, held, W);
  await wide.start(ref, taken, { workerId: 'w-old', epoch: 1, replyTo: '', recovery: { seed: [1, 2, 3, 4], catalogHash: 'h' } });
  await parked(held, 1);
  await parked(taken, 1);
  expect(await wide.reserveResume(ref, held, 'tok-1', 10_000)).toMatchObject({ reserved: true });
  expect(await wide.resume(ref, held, { token: 'tok-1', workerId: 'w-1', epoch: 1, replyTo: '', input: { runId: held } })).toBe(true);
  await wide.append(ref, { type: 'run.output', runId: held, epoch: 1, data: { text: 'after' } });
  await parked(held, 1);
  expect(await wide.release(ref, held, { workerId: 'w-1', epoch: 1, reason: 'memory' })).toBe(true);
  expect(await wide.reserveResume(ref, taken, 'tok-2', 10_000)).toMatchObject({ reserved: true });
  const over = { workerId: 'w-new', from: { owner: 'w-old', epoch: 1 }, token: 'tok-2', reason: 'owner lease expired' };
  expect(await wide.takeOver(ref, taken, over)).toEqual({ taken: true, epoch: 2 });
  await expectListed(ref, held);
  await expectListed(ref, taken);
  expect(listedIds((await redis.hget(keys.run(ref, held), 'entries')) ?? '')).toHaveLength(7);
});

test('a list naming its ids out of order is not relied on: the run is folded from the log', async () => {
  const ref = newRef();
  const [mine, other] = [newRunId(), newRunId()];
  await wide.request(ref, mine, requestData('mine'));
  await wide.request(ref, other, requestData('other'));
  await wide.start(ref, mine, W);
  await wide.append(ref, { type: 'run.output', runId: mine, epoch: 1, data: { text: 'out' } });
  // Its last two ids swapped, as many as it has: another run's entry lies among them, so each is read by id.
  const [request, start, output] = listedIds((await redis.hget(keys.run(ref, mine), 'entries')) ?? '');
  const token = (id: string) => {
    const [ms, seq] = id.split('-').map(Number);
    return `${(ms - Number(request.split('-')[0])).toString(36)}${seq === 0 ? '' : `-${seq.toString(36)}`}`;
  };
  await redis.hset(keys.run(ref, mine), 'entries', `${request} ${token(output)} ${token(start)}`);
  await endAndCompare(ref, mine);
});

test('an end written without compact runs drops the list too', async () => {
  const ref = newRef();
  const runId = newRunId();
  await packing.request(ref, runId, requestData());
  await packing.start(ref, runId, W);
  expect(await redis.hexists(keys.run(ref, runId), 'entries')).toBe(1);
  await plain.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
  expect(await redis.hexists(keys.run(ref, runId), 'entries')).toBe(0);
});

test('a run that lives past what a record holds stops listing its entries', async () => {
  const ref = newRef();
  const runId = newRunId();
  await packing.request(ref, runId, requestData());
  await packing.start(ref, runId, W);
  await sleep(SPAN_MS + 50);
  await packing.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: 'late' } });
  expect(await redis.hget(keys.run(ref, runId), 'entries')).toBe('+');
});

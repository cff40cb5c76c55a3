import type { Redis } from 'ioredis';
import type { ClientTool, SessionRef } from '@codemode/contracts';
import { ClientToolsLedger } from './client-tools-ledger';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { RunLedger } from '../runs/run-ledger';
import { ScriptLoader } from '../platform/script-loader';
import { SessionLedger } from './session-ledger';
import { StoreLedger } from './store-ledger';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

/** SPEC §10: a session's keys expire CODEMODE_SESSION_TTL_SECONDS after its last write. */
const prefix = testPrefix('expiry');
const keys = new KeySpace(prefix);
const TTL_MS = 3_600_000;
/** A refresh sets the TTL plus min(60 s, 1% of it), so that appends right after may skip it (includes/session-expiry.lua). */
const slackOf = (ttlMs: number): number => Math.min(60_000, Math.floor(ttlMs / 100));
const RETENTION_MS = 600_000;
/** Shorter than the session TTL here, so every TTL stays within the setting. */
const scripts = ScriptLoader.withSettings({
  sessionTtlSeconds: TTL_MS / 1000,
  liveRunMaxIdleSeconds: 1800,
  retentionSeconds: RETENTION_MS / 1000,
});
const CAPACITY = 1024 * 1024;
const tool: ClientTool = { name: 'lookup', description: 'Look up things', inputSchema: { type: 'object' } };
let redis: Redis;
let sessions: SessionLedger;
let runs: RunLedger;
let store: StoreLedger;
let tools: ClientToolsLedger;
let log: EventLog;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });

beforeAll(async () => {
  redis = await testRedis('session-expiry');
  sessions = new SessionLedger(redis, keys, scripts);
  runs = new RunLedger(redis, keys, scripts);
  store = new StoreLedger(redis, keys, scripts);
  tools = new ClientToolsLedger(redis, keys, scripts);
  log = new EventLog(redis, keys, scripts);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** Every key of the session with its PTTL. */
async function ttls(ref: SessionRef): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', keys.sessionPattern(ref), 'COUNT', 1000);
    cursor = next;
    for (const key of batch) found.set(key.slice(keys.sessionBase(ref).length + 1), await redis.pttl(key));
  } while (cursor !== '0');
  return found;
}

function expectWithin(found: Map<string, number>, names: string[], max = TTL_MS + slackOf(TTL_MS), min = max - 60_000): void {
  for (const name of names) {
    expect([name, found.get(name)]).toEqual([name, expect.any(Number)]);
    const ttl = found.get(name) ?? 0;
    if (ttl < min || ttl > max) throw new Error(`${name}: PTTL ${ttl} not in [${min}, ${max}]`);
  }
}

/** Shortens every key's TTL, so a later write can be seen refreshing it. */
async function shorten(ref: SessionRef, ms = 5000): Promise<void> {
  for (const name of (await ttls(ref)).keys()) await redis.pexpire(`${keys.sessionBase(ref)}:${name}`, ms);
}

async function startedRun(ref: SessionRef, opts: { idempotencyKey?: string } = {}): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData(), opts);
  await runs.start(ref, runId, { workerId: 'w-1', epoch: 1, replyTo: '' });
  return runId;
}

describe('session keys expire CODEMODE_SESSION_TTL_SECONDS after the last write', () => {
  it('session PUT: session hash and log', async () => {
    const ref = newRef();
    await sessions.configure(ref, { agentId: 'a' });
    const found = await ttls(ref);
    expect([...found.keys()].sort()).toEqual(['events', 'session', 'stored-log', 'stored-minutes']);
    expectWithin(found, ['events', 'session', 'stored-log', 'stored-minutes']);
  });

  it('exec with an idempotency key: run hash, runs index, transcript, idempotency key', async () => {
    const ref = newRef();
    const runId = await startedRun(ref, { idempotencyKey: 'k-1' });
    expectWithin(await ttls(ref), ['events', 'session', 'transcript', 'runs', `run:${runId}`, 'idem:k-1']);
  });

  it('keeps an idempotency key its 24 h when the session lives longer', async () => {
    const long = ScriptLoader.withSettings({ sessionTtlSeconds: 7 * 24 * 3600 });
    const ref = newRef();
    await new RunLedger(redis, keys, long).request(ref, newRunId(), requestData(), { idempotencyKey: 'k-2' });
    expectWithin(await ttls(ref), ['idem:k-2'], 24 * 3600 * 1000);
    expectWithin(await ttls(ref), ['session'], 7 * 24 * 3600 * 1000 + slackOf(7 * 24 * 3600 * 1000));
  });

  it('store commit: store hash; tools PUT: tools key; each write refreshes every long-lived key', async () => {
    const ref = newRef();
    const runId = await startedRun(ref);
    await store.commit(ref, { runId, epoch: 1, writes: new Map([['"k"', '1']]), capacityBytes: CAPACITY });
    expectWithin(await ttls(ref), ['store', 'events', 'session']);

    await tools.put(ref, [tool]);
    expectWithin(await ttls(ref), ['tools']);

    await shorten(ref);
    await tools.put(ref, [tool]);
    expectWithin(await ttls(ref), ['events', 'session', 'transcript', 'runs', 'store', 'tools']);

    await shorten(ref);
    await sessions.configure(ref, {});
    expectWithin(await ttls(ref), ['events', 'session', 'transcript', 'runs', 'store', 'tools']);

    await shorten(ref);
    await log.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: 'hi' } });
    expectWithin(await ttls(ref), ['events', 'session', 'transcript', 'runs', 'store', 'tools', `run:${runId}`]);
  });

  it('a finished run is kept as its record, with the session keys and their TTL', async () => {
    const ref = newRef();
    const runId = await startedRun(ref);
    await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
    const found = await ttls(ref);
    expect(found.has(`run:${runId}`)).toBe(false);
    expectWithin(found, ['events', 'session', 'transcript', 'runs', 'past']);
  });

  it('an append right after a refresh skips it, but never for a key it creates', async () => {
    const ref = newRef();
    const runId = await startedRun(ref);
    const base = keys.sessionBase(ref);
    // Fresh session keys: a run event leaves a shortened key alone (one PTTL instead of nine PEXPIREs)...
    await redis.pexpire(`${base}:runs`, 5000);
    await log.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: 'hi' } });
    expect(await redis.pttl(`${base}:runs`)).toBeLessThanOrEqual(5000);
    expectWithin(await ttls(ref), [`run:${runId}`]);
    // ...but a transcript list the trim emptied is made again by the next result, and gets its TTL.
    await redis.del(`${base}:transcript`);
    await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
    expectWithin(await ttls(ref), ['transcript', 'runs', 'events', 'session']);
    // A stale session (its TTL below the setting) is refreshed by any append.
    await shorten(ref);
    await sessions.configure(ref, {});
    expectWithin(await ttls(ref), ['events', 'session', 'transcript', 'runs']);
    // Never sooner than the TTL after the last write: keys left just below it (inside the slack)
    // are refreshed, not skipped.
    await shorten(ref, TTL_MS - 10_000);
    await sessions.configure(ref, {});
    expectWithin(await ttls(ref), ['events', 'session', 'transcript', 'runs'], TTL_MS + slackOf(TTL_MS), TTL_MS);
  });

  it('a request into a fresh session refreshes only what it makes: its run hash, and a runs index made anew', async () => {
    const ref = newRef();
    const first = await startedRun(ref);
    await runs.finish(ref, first, { epoch: 1, type: 'run.completed', result: completed(1) });
    const base = keys.sessionBase(ref);
    await redis.pexpire(`${base}:events`, 5000);
    const second = await startedRun(ref);
    expect(await redis.pttl(`${base}:events`)).toBeLessThanOrEqual(5000);
    expectWithin(await ttls(ref), [`run:${second}`, 'runs']);
    // A trim that emptied the runs index deleted it: the next request makes it again, with its TTL.
    await redis.del(`${base}:runs`);
    const third = await startedRun(ref);
    expectWithin(await ttls(ref), [`run:${third}`, 'runs']);
  });

  it('a resume reservation keeps the run hash TTL', async () => {
    const ref = newRef();
    const runId = await startedRun(ref);
    await log.append(
      ref,
      untypedAppend({ type: 'run.parked', runId, epoch: 1, data: { expiresAt: '2030-01-01T00:00:00.000Z', result: waiting(runId) } }),
    );
    expect(await runs.reserveResume(ref, runId, 'tok', 10_000)).toMatchObject({ reserved: true });
    expectWithin(await ttls(ref), [`run:${runId}`]);
    await runs.giveBackResume(ref, runId, 'tok');
    expectWithin(await ttls(ref), [`run:${runId}`]);
  });
});

describe('a session outlives its live runs', () => {
  /** A session TTL of a minute, shorter than a live run may stay silent (two hours). */
  const IDLE_MS = 7_200_000;
  const short = ScriptLoader.withSettings({ sessionTtlSeconds: 60, liveRunMaxIdleSeconds: IDLE_MS / 1000 });

  it('a live run’s write lifts the session to the run’s longest silence; later writes never shorten it', async () => {
    const ref = newRef();
    const shortRuns = new RunLedger(redis, keys, short);
    await new SessionLedger(redis, keys, short).configure(ref, {});
    expectWithin(await ttls(ref), ['session', 'events'], 60_000 + slackOf(60_000));

    const runId = newRunId();
    await shortRuns.request(ref, runId, requestData());
    await shortRuns.start(ref, runId, { workerId: 'w-1', epoch: 1, replyTo: '' });
    await new EventLog(redis, keys, short).append(
      ref,
      untypedAppend({
        type: 'run.parked',
        runId,
        epoch: 1,
        data: { expiresAt: '2030-01-01T00:00:00.000Z', result: waiting(runId) },
      }),
    );
    expectWithin(await ttls(ref), ['session', 'events', 'transcript', 'runs', `run:${runId}`], IDLE_MS + slackOf(60_000));

    await new SessionLedger(redis, keys, short).configure(ref, { agentId: 'b' });
    expectWithin(await ttls(ref), ['session', 'events', 'transcript', 'runs', `run:${runId}`], IDLE_MS + slackOf(60_000));
  });
});

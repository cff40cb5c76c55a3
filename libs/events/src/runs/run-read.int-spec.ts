import type { Redis } from 'ioredis';
import type { CodeModeResult, SessionRef } from '@codemode/contracts';
import { EventLog } from '../log/event-log';
import { endedFields } from '../log/projections/views';
import { KeySpace } from '../platform/keys';
import { RunLedger } from './run-ledger';
import { RunListing } from './run-listing';
import { pastField, recordFields } from './run-record';
import { ScriptLoader } from '../platform/script-loader';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

const prefix = testPrefix('run-read');
const keys = new KeySpace(prefix);
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };
let redis: Redis;
let runs: RunLedger;
/** Runs kept in full (CODEMODE_COMPACT_RUNS=0): a finished run keeps its hash, as earlier releases did. */
let full: RunLedger;
let log: EventLog;
let listing: RunListing;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });
/** A result of a few hundred bytes, as a trivial exec's is (its telemetry alone is ~300 B). */
const result = (value: unknown): CodeModeResult => ({ ...completed(value), replaySafe: true });

beforeAll(async () => {
  redis = await testRedis('run-read');
  runs = new RunLedger(redis, keys);
  full = new RunLedger(redis, keys, ScriptLoader.withSettings({ compactRuns: false }));
  log = new EventLog(redis, keys);
  listing = new RunListing(redis, keys, 24 * 3600 * 1000);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function finished(ref: SessionRef, value: unknown, ledger = runs): Promise<string> {
  const runId = newRunId();
  await ledger.request(ref, runId, requestData());
  await ledger.start(ref, runId, W);
  await ledger.finish(ref, runId, { epoch: 1, type: 'run.completed', result: result(value) });
  return runId;
}

/**
 * What an earlier release left in a run hash: a copy of the result, no replaySafe of its own, and
 * each field on its own (not packed as `ended`).
 */
async function asEarlierRelease(ref: SessionRef, runId: string, copy: CodeModeResult): Promise<void> {
  const ended = await redis.hget(keys.run(ref, runId), 'ended');
  if (ended !== null) {
    await redis.hset(keys.run(ref, runId), endedFields(ended));
    await redis.hdel(keys.run(ref, runId), 'ended');
  }
  await redis.hset(keys.run(ref, runId), 'lastResult', JSON.stringify(copy));
  await redis.hdel(keys.run(ref, runId), 'replaySafe');
}

describe('a run hash names its result’s event and keeps no copy (issue 40: bytes kept per run)', () => {
  it('keeps a finished run small: one record, no result copy, no live-only field', async () => {
    const ref = newRef();
    const runId = await finished(ref, 'x'.repeat(200));
    expect(await redis.exists(keys.run(ref, runId))).toBe(0);
    const stored = recordFields((await redis.hget(keys.pastRuns(ref), pastField(runId))) ?? '');
    const hash = { ...stored, ...endedFields(stored.ended) };
    expect(hash.lastResult).toBeUndefined();
    for (const live of ['claimToken', 'lastEvent', 'call', 'historyEvents', 'historyBytes', 'lastEventMs'])
      expect([live, hash[live]]).toEqual([live, undefined]);
    expect(hash.resultEvent).toMatch(/^\d+-\d+$/);
    expect(hash.replaySafe).toBe('true');
    // Its three events are in the record, not in the stream: ~0.1 KB for the request and the claim.
    expect(await redis.xlen(keys.events(ref))).toBe(0);
    expect(await redis.hstrlen(keys.pastRuns(ref), pastField(runId) as string)).toBeLessThan(600);
  });

  it('answers the result from its event, read beside the hash by one script', async () => {
    const ref = newRef();
    const runId = await finished(ref, { n: 1, text: 'é\u2028' });
    expect((await runs.get(ref, runId))?.lastResult).toEqual(result({ n: 1, text: 'é\u2028' }));
    expect((await runs.keyedWait(ref, runId)).view?.lastResult).toEqual(result({ n: 1, text: 'é\u2028' }));
    expect((await runs.readIdleWait(ref, runId)).run?.lastResult).toEqual(result({ n: 1, text: 'é\u2028' }));
  });

  it('a parked run answers its waiting result, and its terminal result once it ends', async () => {
    const ref = newRef();
    const runId = newRunId();
    await runs.request(ref, runId, requestData());
    await runs.start(ref, runId, W);
    await log.append(
      ref,
      untypedAppend({ type: 'run.parked', runId, epoch: 1, data: { expiresAt: '2030-01-01T00:00:00.000Z', result: waiting(runId) } }),
    );
    expect((await runs.get(ref, runId))?.lastResult).toEqual(waiting(runId));
    await log.append(ref, untypedAppend({ type: 'run.resumed', runId, epoch: 2, data: { workerId: 'w-2' } }));
    expect((await runs.get(ref, runId))?.lastResult).toEqual(waiting(runId));
    await runs.finish(ref, runId, { epoch: 2, type: 'run.completed', result: result(3) });
    expect((await runs.get(ref, runId))?.lastResult).toEqual(result(3));
  });

  it('reads an earlier release’s copy as it was, and drops it when the run records a newer result', async () => {
    const ref = newRef();
    const runId = await finished(ref, 1, full);
    await asEarlierRelease(ref, runId, { ...result('copy'), replaySafe: false });
    expect((await runs.get(ref, runId))?.lastResult).toEqual({ ...result('copy'), replaySafe: false });
    expect((await listing.page(ref, 10)).runs[0]).toMatchObject({ runId, replaySafe: false });

    const parked = newRunId();
    await runs.request(ref, parked, requestData());
    await runs.start(ref, parked, W);
    await log.append(
      ref,
      untypedAppend({
        type: 'run.parked',
        runId: parked,
        epoch: 1,
        data: { expiresAt: '2030-01-01T00:00:00.000Z', result: waiting(parked) },
      }),
    );
    await asEarlierRelease(ref, parked, waiting(parked));
    await runs.finish(ref, parked, { epoch: 1, type: 'run.completed', result: result(4) });
    expect(await redis.exists(keys.run(ref, parked))).toBe(0);
    expect(recordFields((await redis.hget(keys.pastRuns(ref), pastField(parked))) ?? '')).not.toHaveProperty('lastResult');
    expect((await runs.get(ref, parked))?.lastResult).toEqual(result(4));
  });

  it('lists runs with their replaySafe and no result', async () => {
    const ref = newRef();
    const runId = await finished(ref, 'x'.repeat(1000));
    const unfinished = newRunId();
    await runs.request(ref, unfinished, requestData());
    const { runs: page } = await listing.page(ref, 10);
    expect(page.map((r) => [r.runId, r.replaySafe])).toEqual([
      [unfinished, null],
      [runId, true],
    ]);
    expect(page[1]).not.toHaveProperty('lastResult');
  });

  it('answers no result when the log no longer holds its event', async () => {
    const ref = newRef();
    const runId = await finished(ref, 1, full);
    await redis.xtrim(keys.events(ref), 'MAXLEN', 0);
    expect(await runs.get(ref, runId)).toMatchObject({ status: 'completed', lastResult: null });
  });
});

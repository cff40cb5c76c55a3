import type { Redis } from 'ioredis';
import { REPAIR_REASONS, type CodeModeResult, type FailedResult, type Repair, type SessionRef } from '@codemode/contracts';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { rebuildSession } from '../log/projections/rebuild-session';
import { RunLedger } from './run-ledger';
import { SessionLedger } from '../ledgers/session-ledger';
import { completed, deleteKeys, failed, newRunId, requestData, testPrefix, testRedis } from '../test-support';

/*
 * SPEC §16 "Bounded repair" driven through the scripts that end cells (finish-run.lua,
 * reject-exec.lua) on real Redis: the session's count of failed cells in a row and the `repair`
 * each failed result gets.
 */

const prefix = testPrefix('repair');
const keys = new KeySpace(prefix);
let redis: Redis;
let runs: RunLedger;
let sessions: SessionLedger;
let log: EventLog;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `repair-${++n}` });

const allowed = (remainingAttempts: number): Repair => ({ allowed: true, remainingAttempts, reason: REPAIR_REASONS.allowed });
const dispatched = (remainingAttempts: number): Repair => ({ allowed: false, remainingAttempts, reason: REPAIR_REASONS.dispatched });
const exhausted: Repair = { allowed: false, remainingAttempts: 0, reason: REPAIR_REASONS.exhausted };
const guestError: FailedResult = { ...(failed('Error: boom') as FailedResult), code: 'internal_error', failurePhase: 'guest' };

beforeAll(async () => {
  redis = await testRedis('repair');
  runs = new RunLedger(redis, keys);
  sessions = new SessionLedger(redis, keys);
  log = new EventLog(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** A cell that ran and ended with `result` (after a tool call when `called`): the result as recorded. */
async function ended(ref: SessionRef, result: CodeModeResult, called = false): Promise<CodeModeResult> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, { workerId: 'w-1', epoch: 1, replyTo: '' });
  if (called) {
    await log.append(ref, {
      type: 'tool.called',
      runId,
      epoch: 1,
      data: { callId: 'bridge:callValue:1', tool: 'write', source: 'client', inputBytes: 2 },
    });
  }
  const type = result.status === 'completed' ? 'run.completed' : 'run.failed';
  const finished = await runs.finish(ref, runId, { epoch: 1, type, result });
  const recorded = (await runs.get(ref, runId))?.lastResult;
  expect(recorded).toEqual(finished.result);
  return finished.result;
}

const repairOf = (result: CodeModeResult): Repair | undefined => (result.status === 'failed' ? result.repair : undefined);

test('failed cells in a row count down, then no attempts are left; a completed cell resets the count', async () => {
  const ref = newRef();
  expect(repairOf(await runs.reject(ref, 'exec', { code: 'return (' }, failed('SyntaxError: x', 'invalid_input')))).toEqual(allowed(1));
  expect(repairOf(await ended(ref, guestError))).toEqual(allowed(0));
  expect(repairOf(await ended(ref, guestError))).toEqual(exhausted);
  expect(repairOf(await ended(ref, guestError))).toEqual(exhausted);
  const done = await ended(ref, completed(1));
  expect(done).toEqual(completed(1));
  expect(repairOf(await ended(ref, guestError))).toEqual(allowed(1));
});

test('a failure after a dispatched tool call gives the dispatched sentence, whatever the count', async () => {
  const ref = newRef();
  expect(repairOf(await ended(ref, guestError, true))).toEqual(dispatched(1));
  expect(repairOf(await ended(ref, guestError))).toEqual(allowed(0));
  expect(repairOf(await ended(ref, guestError, true))).toEqual(dispatched(0));
});

test('aborts and host failures with no call dispatched neither count nor reset, and carry no repair', async () => {
  const ref = newRef();
  expect(repairOf(await ended(ref, guestError))).toEqual(allowed(1));
  expect(await ended(ref, failed('code mode execution aborted', 'aborted'))).not.toHaveProperty('repair');
  expect(await ended(ref, failed('no worker started the cell within its budget; it was not run.'))).not.toHaveProperty('repair');
  expect(repairOf(await ended(ref, guestError))).toEqual(allowed(0));
  // A host failure after a dispatched call counts: the call's effect is what the model must check.
  expect(repairOf(await ended(ref, failed('Redis is unavailable'), true))).toEqual(dispatched(0));
  expect(repairOf(await ended(ref, guestError))).toEqual(exhausted);
});

test('repairAttempts is the session value: 0 turns repair off, removing it restores the default of 2', async () => {
  const ref = newRef();
  expect((await sessions.configure(ref, { repairAttempts: 0 })).repairAttempts).toBe(0);
  expect(repairOf(await ended(ref, guestError))).toEqual(exhausted);
  expect(repairOf(await ended(ref, guestError, true))).toEqual(dispatched(0));
  await ended(ref, completed(null));
  expect((await sessions.configure(ref, { repairAttempts: 10 })).repairAttempts).toBe(10);
  expect(repairOf(await ended(ref, guestError))).toEqual(allowed(9));
  expect((await sessions.configure(ref, { codeMode: { timeoutMs: 500 } })).repairAttempts).toBe(10);
  const cleared = await sessions.configure(ref, { repairAttempts: null });
  expect(cleared).not.toHaveProperty('repairAttempts');
  expect(repairOf(await ended(ref, guestError))).toEqual(allowed(0));
  expect(await sessions.get(ref)).toEqual(rebuildSession(await log.history(ref)));
});

test('sessions keep their own counts', async () => {
  const [a, b] = [newRef(), newRef()];
  await ended(a, guestError);
  await ended(a, guestError);
  expect(repairOf(await ended(b, guestError))).toEqual(allowed(1));
  expect(repairOf(await ended(a, guestError))).toEqual(exhausted);
});

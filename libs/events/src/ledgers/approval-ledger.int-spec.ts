import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { ApprovalLedger } from './approval-ledger';
import { ApprovalClosedError, ApprovalNotFoundError, StaleEpochError } from '../platform/errors';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { PolicyStore } from './policy-store';
import { RunLedger } from '../runs/run-ledger';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis } from '../test-support';

const prefix = testPrefix('approvals');
const keys = new KeySpace(prefix);
let redis: Redis;
let approvals: ApprovalLedger;
let runs: RunLedger;
let log: EventLog;
let policies: PolicyStore;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });
const approvalId = (i: number) => `ap_00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

beforeAll(async () => {
  redis = await testRedis('approvals');
  approvals = new ApprovalLedger(redis, keys);
  runs = new RunLedger(redis, keys);
  log = new EventLog(redis, keys);
  policies = new PolicyStore(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function runningRun(ref: SessionRef): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, { workerId: 'w1', epoch: 1, replyTo: '' });
  return runId;
}

describe('ApprovalLedger', () => {
  it('records a request and its one decision as events, listing it only while pending', async () => {
    const ref = newRef();
    const runId = await runningRun(ref);
    const input = { path: 'a\ud800', n: 1.5e300 };
    const view = await approvals.request(ref, {
      approvalId: approvalId(1),
      runId,
      epoch: 1,
      callId: 'bridge:callValue:1',
      tool: 'ls',
      input,
    });
    expect(view).toEqual({
      approvalId: approvalId(1),
      runId,
      callId: 'bridge:callValue:1',
      tool: 'ls',
      input,
      requestedAt: expect.any(String),
    });
    expect(await approvals.pending(ref)).toEqual([view]);
    expect(await approvals.pendingOfTenant('acme')).toContainEqual({ ...view, sessionId: ref.sessionId });
    expect(await approvals.forCall(ref, runId, 'bridge:callValue:1')).toEqual(view);
    expect(await approvals.forCall(ref, runId, 'bridge:callValue:2')).toBeNull();

    const decided = await approvals.decide(ref, approvalId(1), { decision: 'deny', reason: 'no' });
    expect(decided.decision).toEqual({ decision: 'deny', reason: 'no', decidedAt: expect.any(String) });
    expect(await approvals.pending(ref)).toEqual([]);
    expect((await approvals.ofRun(ref, runId))[0].decision?.decision).toBe('deny');
    await expect(approvals.decide(ref, approvalId(1), { decision: 'approve' })).rejects.toBeInstanceOf(ApprovalClosedError);
    await expect(approvals.decide(ref, approvalId(2), { decision: 'approve' })).rejects.toBeInstanceOf(ApprovalNotFoundError);

    const events = (await log.history(ref)).filter((e) => e.type.startsWith('approval.'));
    expect(events.map((e) => [e.type, e.runId, e.data])).toEqual([
      ['approval.requested', runId, { approvalId: approvalId(1), runId, callId: 'bridge:callValue:1', tool: 'ls', input }],
      [
        'approval.decided',
        runId,
        {
          approvalId: approvalId(1),
          runId,
          callId: 'bridge:callValue:1',
          tool: 'ls',
          decision: 'deny',
          reason: 'no',
          decidedAt: expect.any(String),
        },
      ],
    ]);
  });

  it('fences requests by epoch and voids the pending approvals of an ended run', async () => {
    const ref = newRef();
    const runId = await runningRun(ref);
    await expect(
      approvals.request(ref, { approvalId: approvalId(3), runId, epoch: 0, callId: 'bridge:callValue:1', tool: 'ls', input: {} }),
    ).rejects.toBeInstanceOf(StaleEpochError);
    await approvals.request(ref, { approvalId: approvalId(4), runId, epoch: 1, callId: 'bridge:callValue:2', tool: 'ls', input: {} });
    await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
    expect(await approvals.pending(ref)).toEqual([]);
    await expect(approvals.decide(ref, approvalId(4), { decision: 'approve' })).rejects.toMatchObject({ why: 'voided' });
  });

  it("denies as timed out an operator's late decision, even while no worker watches the approval", async () => {
    const ref = newRef();
    const runId = await runningRun(ref);
    await approvals.request(ref, { approvalId: approvalId(5), runId, epoch: 1, callId: 'bridge:callValue:1', tool: 'ls', input: {} });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await expect(approvals.decide(ref, approvalId(5), { decision: 'approve' }, { timeoutMs: 20 })).rejects.toMatchObject({
      why: 'timed_out',
      message: `approval ${approvalId(5)} timed out before it was decided; it is denied.`,
    });
    expect((await approvals.get(ref, approvalId(5)))?.decision).toEqual({
      decision: 'deny',
      reason: 'approval timed out',
      timedOut: true,
      decidedAt: expect.any(String),
    });
    // Within the timeout, the operator's decision stands.
    await approvals.request(ref, { approvalId: approvalId(6), runId, epoch: 1, callId: 'bridge:callValue:2', tool: 'ls', input: {} });
    expect((await approvals.decide(ref, approvalId(6), { decision: 'approve' }, { timeoutMs: 60_000 })).decision?.decision).toBe('approve');
  });
});

describe('PolicyStore', () => {
  it('keeps the tenant policy without expiry and a session policy with the session', async () => {
    const ref = newRef();
    await runningRun(ref);
    expect(await policies.tenant('acme')).toBeNull();
    await policies.putTenant('acme', { rules: [{ tool: 'exec', decision: 'deny' }] });
    await policies.putSession(ref, { rules: [], default: 'approve' }, 1000);
    expect(await policies.both(ref)).toEqual([{ rules: [{ tool: 'exec', decision: 'deny' }] }, { rules: [], default: 'approve' }]);
    expect(await redis.pttl(keys.tenantPolicy('acme'))).toBe(-1);
    const sessionTtl = await redis.pttl(keys.session(ref));
    expect(await redis.pttl(keys.sessionPolicy(ref))).toBeGreaterThan(sessionTtl - 5000);
  });
});

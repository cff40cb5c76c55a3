import { APPROVAL_TIMED_OUT_REASON, toolBlockedMessage, toolDeniedMessage } from '@codemode/contracts';
import { callOf, CLIENT_TOOLS, pipelineOver, recordingGate, sessionCatalog } from './testing/tool-call-fakes';
import { CANCELED_MESSAGE } from './tool-call-error';

const catalog = sessionCatalog();
const refund = catalog.byCallableName('refund', { agents: false })!;
const read = catalog.byCallableName('read', { agents: false })!;
const call = (id = 'bridge:callValue:1') => callOf(id, 'callValue', { tool: 'refund', input: { order: 1 } }, 1);
const never = new AbortController().signal;
const approveRefund = { rules: [{ tool: 'refund', decision: 'approve' as const }] };

describe('CallPolicy (SPEC §11)', () => {
  it('decides by the policy name of the entry, the default allowing', () => {
    const { policy } = pipelineOver([], { policy: { rules: [{ tool: 'refund', decision: 'deny' }] } });
    expect(policy.decisionFor(refund)).toBe('deny');
    expect(policy.decisionFor(read)).toBe('allow');
  });

  it('denies: records tool.blocked and counts it', async () => {
    const { policy, log, metrics } = pipelineOver([], { policy: { rules: [{ tool: 'refund', decision: 'deny' }] } });
    await expect(policy.admit(call(), refund, {}, never, undefined)).rejects.toThrow(toolBlockedMessage('refund'));
    expect(log.written).toEqual([
      { type: 'tool.blocked', runId: 'run_1', epoch: 3, data: { callId: 'bridge:callValue:1', tool: 'refund' } },
    ]);
    expect((await metrics.toolCallsBlockedTotal.get()).values[0].value).toBe(1);
  });

  it('approve: asks once, with the endpoint the call goes to, tells the notice, steps aside, and goes on when approved', async () => {
    const { policy, approvals, notices } = pipelineOver([], { policy: approveRefund });
    const gate = recordingGate();
    const admitted = policy.admit(call(), refund, { order: 1 }, never, gate);
    await until(() => approvals.requested.length === 1);
    const [asked] = approvals.requested;
    expect(asked).toMatchObject({ runId: 'run_1', epoch: 3, callId: 'bridge:callValue:1', tool: 'refund', input: { order: 1 } });
    expect(asked.endpoint).toBe(CLIENT_TOOLS[0].endpoint);
    expect(notices).toEqual([asked.approvalId]);
    await approvals.decide(null, asked.approvalId, { decision: 'approve' });
    await expect(admitted).resolves.toBe('approve');
    // Stepped aside while it waited, and took a slot again once approved.
    expect(gate.moves).toEqual(['hold', 'resume']);
  });

  it('approve: a denial rejects with its reason', async () => {
    const { policy, approvals } = pipelineOver([], { policy: approveRefund });
    const admitted = policy.admit(call(), refund, {}, never, recordingGate());
    await until(() => approvals.requested.length === 1);
    await approvals.decide(null, approvals.requested[0].approvalId, { decision: 'deny', reason: 'too much' });
    await expect(admitted).rejects.toThrow(toolDeniedMessage('refund', 'too much'));
  });

  it('approve: a run resumed or replayed finds its approval and decision again, and never asks twice', async () => {
    const { policy, approvals, notices } = pipelineOver([], { policy: approveRefund });
    approvals.decided = { decision: 'approve', decidedAt: new Date().toISOString() };
    await policy.admit(call(), refund, {}, never, undefined);
    await policy.admit(call(), refund, {}, never, undefined);
    expect(approvals.requested).toHaveLength(1);
    expect(notices).toHaveLength(1);
  });

  it('approve: denies as timed out once CODEMODE_APPROVAL_TIMEOUT_SECONDS have passed', async () => {
    const { policy } = pipelineOver([], { policy: approveRefund, approvalTimeoutMs: 50 });
    await expect(policy.admit(call(), refund, {}, never, recordingGate())).rejects.toThrow(
      toolDeniedMessage('refund', APPROVAL_TIMED_OUT_REASON),
    );
  });

  it('approve: a call whose run ended while it waited is canceled, never dispatched', async () => {
    const { policy, approvals } = pipelineOver([], { policy: approveRefund, approvalTimeoutMs: 50 });
    approvals.voided = true;
    await expect(policy.admit(call(), refund, {}, never, recordingGate())).rejects.toThrow(CANCELED_MESSAGE);
  });

  it('approve: refuses an approval shown for another endpoint than the tool has now', async () => {
    const { policy, approvals } = pipelineOver([], { policy: approveRefund });
    approvals.decided = { decision: 'approve', decidedAt: new Date().toISOString() };
    await approvals.request(null, {
      approvalId: 'ap_old',
      runId: 'run_1',
      epoch: 1,
      callId: 'bridge:callValue:1',
      tool: 'refund',
      input: {},
      endpoint: 'https://old.example.com/',
    });
    await expect(policy.admit(call(), refund, {}, never, undefined)).rejects.toThrow(
      toolDeniedMessage('refund', 'its endpoint changed after the approval was requested'),
    );
  });

  it('reads the policy again for a resumed leg: calls admitted meanwhile wait for it; a failed read keeps the last one', async () => {
    const { policy } = pipelineOver([], { policy: { rules: [] } });
    let answer!: (value: { rules: { tool: string; decision: 'deny' }[] }) => void;
    policy.reload(() => new Promise((resolve) => (answer = resolve)));
    const admitted = policy.admit(call(), refund, {}, never, undefined);
    answer({ rules: [{ tool: 'refund', decision: 'deny' }] });
    await expect(admitted).rejects.toThrow(toolBlockedMessage('refund'));
    policy.reload(() => Promise.reject(new Error('Redis away')));
    await expect(policy.admit(call('c2'), refund, {}, never, undefined)).rejects.toThrow(toolBlockedMessage('refund'));
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 100 && !done(); turn += 1) await new Promise((resolve) => setTimeout(resolve, 5));
}

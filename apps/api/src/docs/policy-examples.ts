import type { ApprovalDecisionInput, ApprovalView, Policy } from '@codemode/contracts';
import type { Example } from './example';
import type { POLICY_REQUEST_SCHEMAS, POLICY_RESPONSE_SCHEMAS } from './policy-schemas';

const policy: Policy = {
  rules: [
    { tool: 'exec', decision: 'approve' },
    { tool: 'MCP.github.*', decision: 'approve' },
    { tool: 'MCP.*.delete*', decision: 'deny' },
  ],
  default: 'allow',
};
const approval: ApprovalView = {
  approvalId: 'ap_4b0e6f7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b',
  runId: 'cm_0f8e2a4c-7b1d-4c39-9a52-5e6d7c8b9a01',
  callId: 'bridge:callValue:1',
  tool: 'exec',
  input: { command: 'df -h' },
  requestedAt: '2026-01-15T10:00:00.000Z',
};
const approve: ApprovalDecisionInput = { decision: 'approve' };
const deny: ApprovalDecisionInput = { decision: 'deny', reason: 'not during the freeze' };

/** Examples of the SPEC §11 bodies and answers (checked against their schemas like the others). */
export const POLICY_EXAMPLES: Record<
  keyof typeof POLICY_REQUEST_SCHEMAS | keyof typeof POLICY_RESPONSE_SCHEMAS,
  Record<string, Example>
> = {
  PolicyInput: { policy: { summary: 'Approve shell and GitHub calls, refuse deletions', value: policy } },
  ApprovalDecisionInput: { approve: { summary: 'Approve', value: approve }, deny: { summary: 'Deny with a reason', value: deny } },
  Policy: { policy: { summary: 'The stored policy', value: policy } },
  ApprovalList: { pending: { summary: 'One pending approval', value: { approvals: [approval] } } },
  TenantApprovalList: {
    pending: { summary: 'Pending approvals of every session', value: { approvals: [{ ...approval, sessionId: 's1' }] } },
  },
  ApprovalDecided: { approved: { summary: 'Recorded', value: { ...approval, decision: 'approve' } } },
};

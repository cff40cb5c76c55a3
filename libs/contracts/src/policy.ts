import { z } from 'zod';

/** What a policy rule (or the default) does with a tool call made from a cell (SPEC §11). */
export const POLICY_DECISIONS = ['allow', 'deny', 'approve'] as const;
export const PolicyDecisionSchema = z.enum(POLICY_DECISIONS);
export type PolicyDecision = z.infer<typeof PolicyDecisionSchema>;

/**
 * One rule: `tool` is an exact host tool name (`read`, `exec`, `process`, a client tool's name,
 * `MCP.<server>.<tool>` with the server's own tool name) or a glob in which `*` matches any run of
 * characters.
 */
export const PolicyRuleSchema = z.object({ tool: z.string().min(1).max(256), decision: PolicyDecisionSchema }).strict();
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

/** `PUT /v1/policy` and the session's `policy` field; `default` is `allow` when absent. */
export const PolicySchema = z.object({ rules: z.array(PolicyRuleSchema).max(1000), default: PolicyDecisionSchema.optional() }).strict();
export type Policy = z.infer<typeof PolicySchema>;

/** `ap_<uuid>`. */
export const APPROVAL_ID_PATTERN = /^ap_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `POST /v1/sessions/{sid}/approvals/{approvalId}`. */
export const ApprovalDecisionInputSchema = z.object({
  decision: z.enum(['approve', 'deny']),
  reason: z.string().max(1000).optional(),
});
export type ApprovalDecisionInput = z.infer<typeof ApprovalDecisionInputSchema>;

/** A pending approval as `GET …/approvals` lists it; `tool` is the call's policy name. */
export const ApprovalViewSchema = z.object({
  approvalId: z.string(),
  runId: z.string(),
  callId: z.string(),
  tool: z.string(),
  input: z.unknown(),
  /** A client tool's webhook endpoint: where the call goes once approved (SPEC §11). */
  endpoint: z.string().optional(),
  requestedAt: z.string(),
});
export type ApprovalView = z.infer<typeof ApprovalViewSchema>;

/** `GET /v1/approvals`: the same, across the tenant's sessions. */
export const TenantApprovalViewSchema = ApprovalViewSchema.extend({ sessionId: z.string() });
export type TenantApprovalView = z.infer<typeof TenantApprovalViewSchema>;

/**
 * How an approval was decided: `timeout` is a deny the service made after
 * CODEMODE_APPROVAL_TIMEOUT_SECONDS (the metric's `decision` label).
 */
export const APPROVAL_OUTCOMES = ['approve', 'deny', 'timeout'] as const;
export type ApprovalOutcome = (typeof APPROVAL_OUTCOMES)[number];

/** The recorded decision of an approval (`approval.decided` data, minus the ids). */
export const ApprovalDecisionSchema = z.object({
  decision: z.enum(['approve', 'deny']),
  reason: z.string().optional(),
  timedOut: z.boolean().optional(),
  decidedAt: z.string(),
});
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

/** The reason of an approval the service denied because nobody decided it in time (SPEC §11). */
export const APPROVAL_TIMED_OUT_REASON = 'approval timed out';

/** SPEC §11: what a denied-by-policy call rejects with. */
export function toolBlockedMessage(tool: string): string {
  return `code mode tool ${tool} is blocked by policy.`;
}

/**
 * SPEC §11: what an agent key's REST `shell/exec` or `process` call answers (403) when the
 * session's policy says `approve` for it: only a cell's call can wait for an operator.
 */
export function toolNeedsCellApprovalMessage(tool: string): string {
  return `code mode tool ${tool} needs an operator's approval; call it from a cell.`;
}

/** SPEC §11: what a call whose approval was denied (or timed out) rejects with. */
export function toolDeniedMessage(tool: string, reason: string | undefined): string {
  return `code mode tool ${tool} was denied: ${reason === undefined || reason.trim() === '' ? 'no reason given' : reason}`;
}

import { z } from 'zod';
import { ApprovalDecisionInputSchema, ApprovalViewSchema, PolicySchema, TenantApprovalViewSchema } from '@codemode/contracts';

/*
 * Tool policy and approvals (SPEC §11): the bodies and answers of PolicyController and
 * ApprovalsController, for the OpenAPI document.
 */

/** `GET /v1/sessions/{sid}/approvals`. */
export const ApprovalListSchema = z.object({ approvals: z.array(ApprovalViewSchema) });
/** `GET /v1/approvals`. */
export const TenantApprovalListSchema = z.object({ approvals: z.array(TenantApprovalViewSchema) });
/** `POST …/approvals/{approvalId}`: the approval with the decision just recorded. */
export const ApprovalDecidedSchema = ApprovalViewSchema.extend({ decision: z.enum(['approve', 'deny']), reason: z.string().optional() });

export const POLICY_REQUEST_SCHEMAS = {
  PolicyInput: PolicySchema,
  ApprovalDecisionInput: ApprovalDecisionInputSchema,
} satisfies Record<string, z.ZodType>;

export const POLICY_RESPONSE_SCHEMAS = {
  Policy: PolicySchema,
  ApprovalList: ApprovalListSchema,
  TenantApprovalList: TenantApprovalListSchema,
  ApprovalDecided: ApprovalDecidedSchema,
} satisfies Record<string, z.ZodType>;

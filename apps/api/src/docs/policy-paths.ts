import { body, errors, ok, param, type PathItem } from './openapi-builders';

const APPROVALS = '/v1/sessions/{sid}/approvals';

/** The routes of SPEC §11: tool policy and approvals (PolicyController, ApprovalsController). */
export function policyPaths(): Record<string, PathItem> {
  return {
    '/v1/policy': {
      get: {
        operationId: 'getPolicy',
        tags: ['policy'],
        summary: "Read the tenant's tool policy",
        responses: { '200': ok('The stored policy (`{rules: []}` when none was put).', 'Policy'), ...errors(401, 503) },
      },
      put: {
        operationId: 'putPolicy',
        tags: ['policy'],
        summary: "Replace the tenant's tool policy",
        description:
          '`{rules: [{tool, decision}], default?}`: `tool` is a host tool name (`read`, `exec`, `process`, a client tool, `MCP.<server>.<tool>`) or a `*` glob; ' +
          'the most specific rule wins (exact over glob, longer glob over shorter, later over earlier). Operator keys only.',
        requestBody: body('PolicyInput'),
        responses: { '200': ok('The stored policy.', 'Policy'), ...errors(400, 401, 403, 413, 503) },
      },
    },
    '/v1/approvals': {
      get: {
        operationId: 'listTenantApprovals',
        tags: ['policy'],
        summary: "Pending approvals of all the tenant's sessions",
        responses: { '200': ok('Pending approvals, oldest first, each with its `sessionId`.', 'TenantApprovalList'), ...errors(401, 503) },
      },
    },
    [APPROVALS]: {
      parameters: [param('SessionId')],
      get: {
        operationId: 'listApprovals',
        tags: ['policy'],
        summary: "Pending approvals of a session's tool calls",
        responses: { '200': ok('Pending approvals, oldest first.', 'ApprovalList'), ...errors(400, 401, 404, 503) },
      },
    },
    [`${APPROVALS}/{approvalId}`]: {
      parameters: [param('SessionId'), param('ApprovalId')],
      post: {
        operationId: 'decideApproval',
        tags: ['policy'],
        summary: 'Approve or deny a pending tool call',
        description:
          'Approve → the call is dispatched and the cell goes on with its remaining budget; deny → the guest promise rejects with ' +
          '`code mode tool <name> was denied: <reason or "no reason given">`. Operator keys only.',
        requestBody: body('ApprovalDecisionInput'),
        responses: { '200': ok('Recorded (`approval.decided`).', 'ApprovalDecided'), ...errors(400, 401, 403, 404, 409, 413, 503) },
      },
    },
  };
}

import { lookup } from 'node:dns';
import type { ApprovalView } from '@codemode/contracts';
import { WebhookToolError } from '../errors';
import { signedJsonHeaders } from './signature';
import { postBounded } from './webhook-request';

/** How long the platform has to take an approval notification. */
export const APPROVAL_WEBHOOK_TIMEOUT_MS = 10_000;
/** The platform's answer is not read: a small bound is plenty. */
const ANSWER_LIMIT_BYTES = 64 * 1024;

/** The body of the `approval.requested` notification (SPEC §11), posted as JSON. */
export interface ApprovalWebhookBody extends ApprovalView {
  readonly type: 'approval.requested';
  /** Session ids repeat across tenants: the receiver needs both to know whose call waits. */
  readonly tenant: string;
  readonly sessionId: string;
}

/**
 * Tells the platform that a call waits for an approval (`CODEMODE_APPROVAL_WEBHOOK`), so it need
 * not poll `GET /v1/approvals`. Signed like tool webhooks with the tenant's secret (no signature
 * header without one). The address is the operator's own configuration, so the tenant address
 * rules of SPEC §10 do not apply to it. Redirects are not followed.
 * @throws WebhookToolError when the platform does not answer 2xx in time
 */
export async function postApprovalRequested(url: string, body: ApprovalWebhookBody, secret: string | undefined): Promise<void> {
  const payload = JSON.stringify(body);
  const headers = signedJsonHeaders(payload, secret, Date.now());
  const answer = await postBounded(new URL(url), {
    headers,
    payload,
    lookup,
    signal: AbortSignal.timeout(APPROVAL_WEBHOOK_TIMEOUT_MS),
    limit: ANSWER_LIMIT_BYTES,
  });
  if (answer.status < 200 || answer.status > 299) {
    throw new WebhookToolError('webhook_http_error', `the approval webhook answered HTTP ${answer.status}.`, answer.status);
  }
}

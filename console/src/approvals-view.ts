import { api, ApiProblem } from './api.js';
import { fill, h, notice } from './elements.js';
import { ago, clock, json } from './format.js';
import { every, runHref, sessionHref, showFailure, type ViewContext } from './view-context.js';

/** One pending approval as SPEC §11 `GET /v1/approvals` answers it. */
interface PendingApproval {
  approvalId: string;
  sessionId: string;
  runId: string;
  callId: string;
  tool: string;
  input: unknown;
  /** A client tool's webhook endpoint: where the call goes once approved. */
  endpoint?: string;
  requestedAt: string;
}

const REFRESH_MS = 3000;

/** `#/approvals`: pending approvals across the tenant's sessions, approve or deny with a reason. */
export function renderApprovals(ctx: ViewContext): void {
  const list = h('div', { 'aria-live': 'polite' });
  fill(
    ctx.root,
    h(
      'div',
      { class: 'view-head' },
      h('h1', {}, 'Approvals'),
      h('p', { class: 'muted' }, 'Tool calls waiting for an operator, oldest first.'),
    ),
    list,
  );
  /** Cards stay put while their reason box is being typed in: only new or gone approvals redraw. */
  let shownIds: string | null = null;

  every(REFRESH_MS, ctx.signal, async () => {
    try {
      const { approvals } = await api<{ approvals: PendingApproval[] }>('GET', '/v1/approvals', undefined, ctx.signal);
      const ids = approvals.map((a) => a.approvalId).join(',');
      if (ids === shownIds) return;
      shownIds = ids;
      fill(
        list,
        approvals.length === 0
          ? notice('empty', 'No approvals are waiting.', 'Calls to tools whose policy says "approve" show here until someone decides.')
          : approvals.map((a) => card(ctx, a, () => (shownIds = null))),
      );
    } catch (error) {
      if (error instanceof ApiProblem && error.status === 404) {
        shownIds = null;
        fill(
          list,
          notice(
            'info',
            'Approvals are not available on this server.',
            'This API does not have the approvals feature (SPEC §11) yet; this panel lights up once it does.',
          ),
        );
        return;
      }
      shownIds = null;
      showFailure(ctx, list, error, 'the approvals');
    }
  });
}

function card(ctx: ViewContext, a: PendingApproval, onDecided: () => void): HTMLElement {
  const reasonId = `reason-${a.approvalId}`;
  const reason = h('input', { id: reasonId, type: 'text', placeholder: 'optional', autocomplete: 'off' });
  const status = h('p', { role: 'status' });
  const decide = (decision: 'approve' | 'deny') => async (): Promise<void> => {
    const body = reason.value.trim() ? { decision, reason: reason.value.trim() } : { decision };
    try {
      await api('POST', `/v1/sessions/${encodeURIComponent(a.sessionId)}/approvals/${encodeURIComponent(a.approvalId)}`, body, ctx.signal);
      fill(status, decision === 'approve' ? 'Approved.' : 'Denied.');
      onDecided();
    } catch (error) {
      if (error instanceof ApiProblem && error.status === 409) {
        fill(status, 'Someone already decided this one.');
        onDecided();
        return;
      }
      showFailure(ctx, status, error, 'the decision');
    }
  };
  return h(
    'article',
    { class: 'card', 'data-approval': a.approvalId },
    h(
      'h2',
      {},
      h('span', { class: 'mono' }, a.tool),
      ' ',
      h('span', { class: 'muted', title: clock(a.requestedAt) }, `waiting ${ago(a.requestedAt)}`),
    ),
    h(
      'p',
      {},
      'Session ',
      h('a', { href: sessionHref(a.sessionId) }, a.sessionId),
      ', run ',
      h('a', { href: runHref(a.sessionId, a.runId), class: 'mono' }, a.runId),
    ),
    ...(a.endpoint === undefined ? [] : [h('p', {}, 'Sends to ', h('span', { class: 'mono', 'data-endpoint': '' }, a.endpoint))]),
    h('pre', { class: 'code' }, json(a.input)),
    h('label', { for: reasonId }, 'Reason'),
    reason,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', onclick: () => void decide('approve')() }, 'Approve'),
      h('button', { type: 'button', class: 'danger', onclick: () => void decide('deny')() }, 'Deny'),
    ),
    status,
  );
}

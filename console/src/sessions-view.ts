import type { SessionList, SessionSummary } from '@codemode/contracts';
import { api } from './api.js';
import { fill, h, notice } from './elements.js';
import { ago, clock } from './format.js';
import { every, sessionHref, showFailure, table, type ViewContext } from './view-context.js';

const PAGE = 50;
const REFRESH_MS = 3000;

/** `#/`: the tenant's sessions, newest activity first, filtered by id or agent, kept current. */
export function renderSessions(ctx: ViewContext): void {
  const filter = h('input', { id: 'session-filter', type: 'search', placeholder: 'session id or agent id', autocomplete: 'off' });
  const list = h('div', { 'aria-live': 'polite' });
  const more = h('div');
  fill(
    ctx.root,
    h('div', { class: 'view-head' }, h('h1', {}, 'Sessions'), h('p', { class: 'muted' }, 'Newest activity first; refreshed every 3 s.')),
    h('div', { class: 'toolbar' }, h('label', { for: 'session-filter' }, 'Filter'), filter),
    list,
    more,
  );
  let sessions: SessionSummary[] = [];
  let next: string | null = null;
  /** Pages past the first the operator asked for; the refresh keeps them. */
  let extra: SessionSummary[] = [];

  const draw = (): void => {
    const needle = filter.value.trim().toLowerCase();
    const shown = [...sessions, ...extra.filter((e) => !sessions.some((s) => s.sessionId === e.sessionId))].filter(
      (s) => !needle || s.sessionId.toLowerCase().includes(needle) || (s.agentId ?? '').toLowerCase().includes(needle),
    );
    if (sessions.length === 0) {
      fill(
        list,
        notice(
          'empty',
          'No sessions yet for this tenant.',
          h(
            'span',
            {},
            'Any write creates one, e.g. ',
            h('code', {}, 'POST /v1/sessions/s1/exec {"code":"return 1"}'),
            '; it appears here within seconds.',
          ),
        ),
      );
    } else if (shown.length === 0) {
      fill(list, notice('empty', `No session matches “${filter.value}”.`, 'Clear the filter, or load more sessions below.'));
    } else {
      fill(list, table('Sessions', ['Session', 'Agent', 'Running', 'Parked', 'Last activity', 'Created'], shown.map(row)));
    }
    fill(
      more,
      next
        ? h(
            'button',
            {
              type: 'button',
              onclick: () => void loadMore(),
            },
            'Load more sessions',
          )
        : null,
    );
  };

  const loadMore = async (): Promise<void> => {
    if (!next) return;
    try {
      const page = await api<SessionList>('GET', `/v1/sessions?limit=${PAGE}&cursor=${encodeURIComponent(next)}`, undefined, ctx.signal);
      extra = [...extra, ...page.sessions];
      next = page.next;
      draw();
    } catch (error) {
      showFailure(ctx, more, error, 'more sessions');
    }
  };

  filter.addEventListener('input', draw);
  every(REFRESH_MS, ctx.signal, async () => {
    try {
      const page = await api<SessionList>('GET', `/v1/sessions?limit=${PAGE}`, undefined, ctx.signal);
      sessions = page.sessions;
      if (extra.length === 0) next = page.next;
      draw();
    } catch (error) {
      showFailure(ctx, list, error, 'the sessions');
    }
  });
}

function row(s: SessionSummary): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-session': s.sessionId },
    h('td', {}, h('a', { href: sessionHref(s.sessionId) }, s.sessionId)),
    h('td', {}, s.agentId ?? h('span', { class: 'muted' }, '—')),
    h('td', { class: s.runs.running > 0 ? 'num hot' : 'num' }, s.runs.running),
    h('td', { class: s.runs.parked > 0 ? 'num warm' : 'num' }, s.runs.parked),
    h('td', { title: clock(s.updatedAt) }, ago(s.updatedAt)),
    h('td', {}, clock(s.createdAt)),
  );
}

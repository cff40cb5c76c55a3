import type { Event, RunList, RunSummary, SessionView, TranscriptEntry } from '@codemode/contracts';
import { api, ApiProblem, sessionPath } from './api.js';
import { fill, h, notice } from './elements.js';
import { followEvents } from './event-stream.js';
import { between, clock, duration, json, text } from './format.js';
import { every, fact, runHref, showFailure, statusBadge, table, type ViewContext } from './view-context.js';
import { renderShellPanel } from './shell-panel.js';

/** Events kept in the live panel; older ones scroll away. */
const LIVE_MAX = 300;

/** `#/sessions/<sid>`: its runs, the live event stream, transcript, store and shell processes. */
export function renderSession(ctx: ViewContext, sid: string): void {
  const head = h(
    'div',
    { class: 'view-head' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Sessions'), ' / ', sid),
    h('h1', {}, sid),
  );
  const facts = h('div', { class: 'facts' });
  const runs = h('div');
  const liveState = h('span', { class: 'stream-state', role: 'status' }, 'connecting…');
  const live = h('ol', { class: 'events', id: 'live-events', 'aria-live': 'polite' });
  const transcript = h('div');
  const store = h('div');
  const shell = h('div');
  fill(
    ctx.root,
    head,
    facts,
    h('section', { 'aria-labelledby': 'runs-title' }, h('h2', { id: 'runs-title' }, 'Runs'), runs),
    h(
      'section',
      { 'aria-labelledby': 'live-title' },
      h('h2', { id: 'live-title' }, 'Live events ', liveState),
      h('div', { class: 'scroll', tabindex: 0, 'aria-label': 'Live events' }, live),
    ),
    h('section', {}, h('details', {}, h('summary', {}, h('h2', {}, 'Transcript')), transcript)),
    h('section', {}, h('details', {}, h('summary', {}, h('h2', {}, 'Session store')), store)),
    h('section', { 'aria-labelledby': 'shell-title' }, h('h2', { id: 'shell-title' }, 'Shell processes'), shell),
  );

  /** True when the session exists (its facts are shown). */
  const loadSession = async (): Promise<boolean> => {
    try {
      const view = await api<SessionView>('GET', sessionPath(sid), undefined, ctx.signal);
      fill(
        facts,
        fact('Agent', view.agentId ?? '—'),
        fact('Runs', view.counts.runs),
        fact('Events', view.counts.events),
        fact('Created', clock(view.createdAt)),
        fact('Last write', clock(view.updatedAt)),
        fact('Time budget', duration(view.codeMode.timeoutMs)),
      );
      return true;
    } catch (error) {
      if (error instanceof ApiProblem && error.status === 404) {
        fill(
          ctx.root,
          notice('empty', `There is no session “${sid}” for this tenant.`, h('a', { href: '#/' }, 'Back to the sessions list')),
        );
        return false;
      }
      showFailure(ctx, facts, error, 'the session');
      return false;
    }
  };

  const loadRuns = async (): Promise<void> => {
    try {
      const page = await api<RunList>('GET', `${sessionPath(sid)}/runs?limit=100`, undefined, ctx.signal);
      fill(
        runs,
        page.runs.length === 0
          ? notice('empty', 'This session has no runs yet.', 'Runs appear here as soon as an exec is requested.')
          : table('Runs of the session', ['Title', 'Status', 'Duration', 'Replay-safe', 'Requested', 'Worker'], page.runs.map(runRow)),
      );
    } catch (error) {
      showFailure(ctx, runs, error, 'the runs');
    }
  };

  const loadSide = async (): Promise<void> => {
    await Promise.all([
      api<{ entries: TranscriptEntry[] }>('GET', `${sessionPath(sid)}/transcript`, undefined, ctx.signal).then(
        ({ entries }) =>
          fill(
            transcript,
            entries.length === 0 ? notice('empty', 'Nothing in the transcript yet.') : h('pre', { class: 'code' }, json(entries)),
          ),
        (error: unknown) => showFailure(ctx, transcript, error, 'the transcript'),
      ),
      api<{ values: Record<string, unknown> }>('GET', `${sessionPath(sid)}/store`, undefined, ctx.signal).then(
        ({ values }) =>
          fill(
            store,
            Object.keys(values).length === 0
              ? notice('empty', 'The store is empty.', h('span', {}, 'Cells write to it with ', h('code', {}, 'store(key, value)'), '.'))
              : h('pre', { class: 'code' }, json(values)),
          ),
        (error: unknown) => showFailure(ctx, store, error, 'the store'),
      ),
    ]);
  };

  void loadSession().then((exists) => {
    // The process list is a POST that would create the session: only for one that exists.
    if (exists) renderShellPanel(ctx, sid, shell);
    return loadRuns();
  });
  void loadSide();
  // Statuses move through events; durations of running runs grow with the clock.
  every(5000, ctx.signal, loadRuns);

  let pending: number | undefined;
  const refreshSoon = (): void => {
    window.clearTimeout(pending);
    pending = window.setTimeout(() => void Promise.all([loadRuns(), loadSession(), loadSide()]), 150);
  };
  void followEvents(sessionPath(sid), undefined, ctx.signal, {
    onEvent: (event) => {
      live.append(eventItem(sid, event));
      while (live.childElementCount > LIVE_MAX) live.firstElementChild?.remove();
      live.parentElement?.scrollTo({ top: live.parentElement.scrollHeight });
      if (event.type.startsWith('run.') || event.type === 'store.committed' || event.type === 'exec.rejected') refreshSoon();
    },
    onState: (state, detail) => fill(liveState, state === 'live' ? 'live' : `reconnecting (${detail ?? 'closed'})`),
  });
}

function runRow(run: RunSummary): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-run': run.runId },
    h('td', {}, h('a', { href: runHref(run.sessionId, run.runId) }, run.title || run.runId)),
    h('td', {}, statusBadge(run.status)),
    h('td', { class: 'num' }, duration(between(run.startedAt ?? run.createdAt, run.endedAt))),
    h('td', {}, run.replaySafe === null ? '—' : run.replaySafe ? 'yes' : 'no'),
    h('td', {}, clock(run.createdAt)),
    h('td', { class: 'mono' }, run.owner ?? '—'),
  );
}

export function eventItem(sid: string, event: Event): HTMLLIElement {
  const summary = summarize(event);
  return h(
    'li',
    { 'data-type': event.type },
    h('span', { class: 'ev-time' }, clock(event.at).slice(11)),
    h('span', { class: `ev-type ev-${event.type.split('.')[0]}` }, event.type),
    event.runId ? h('a', { href: runHref(sid, event.runId), class: 'mono' }, event.runId.slice(0, 11)) : null,
    summary ? h('span', { class: 'ev-detail label-fit', title: summary }, summary) : null,
  );
}

function summarize(event: Event): string {
  const d = event.data;
  if (event.type === 'run.requested') return text(d.title);
  if (event.type === 'tool.called') return `${text(d.tool)}${d.answeredBy === 'platform' ? ' (for the platform to answer)' : ''}`;
  if (event.type === 'tool.settled') {
    const outcome = d.ok ? 'ok' : 'error';
    // A platform's answer names neither the tool nor a duration: only its call.
    if (d.answeredBy === 'platform') return `${text(d.callId)} answered by the platform: ${outcome}`;
    return `${text(d.tool)} ${outcome} ${duration(Number(d.durationMs))}`;
  }
  if (event.type === 'run.started') return `on ${text(d.workerId)}`;
  if (event.type === 'run.failed' || event.type === 'run.lost' || event.type === 'run.expired') {
    const result = d.result as { error?: string } | undefined;
    return result?.error ?? text(d.reason);
  }
  return '';
}

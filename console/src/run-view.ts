import type { CodeModeResult, Event, RunView } from '@codemode/contracts';
import { api, ApiProblem, sessionPath } from './api.js';
import { fill, h, notice } from './elements.js';
import { followEvents } from './event-stream.js';
import { between, clock, duration, json, text } from './format.js';
import { timelineSvg } from './timeline.js';
import { toolCallList } from './tool-call-view.js';
import { toolCallsOf } from './tool-calls.js';
import { fact, sessionHref, showFailure, statusBadge, type ViewContext } from './view-context.js';
import { eventItem } from './session-view.js';

const ABORTABLE = new Set(['requested', 'running', 'waiting']);

/** `#/sessions/<sid>/runs/<runId>`: code, result, output, the timeline picture, its tool calls, its events, abort. */
export function renderRun(ctx: ViewContext, sid: string, runId: string): void {
  const title = h('h1', { class: 'label-fit', title: runId }, runId);
  const calls = toolCallList(sid, runId, ctx.signal);
  const facts = h('div', { class: 'facts' });
  const actions = h('div', { class: 'actions' });
  const timeline = h('div', { class: 'timeline-box' }, h('p', { class: 'muted' }, 'Reading the run’s events…'));
  const code = h('pre', { class: 'code', id: 'run-code' }, '…');
  const result = h('div');
  const output = h('div');
  const events = h('ol', { class: 'events', id: 'run-events' });
  fill(
    ctx.root,
    h(
      'div',
      { class: 'view-head' },
      h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Sessions'), ' / ', h('a', { href: sessionHref(sid) }, sid), ' / run'),
      title,
    ),
    facts,
    actions,
    h('section', { 'aria-labelledby': 'tl-title' }, h('h2', { id: 'tl-title' }, 'Timeline'), timeline),
    h('section', { 'aria-labelledby': 'calls-title' }, h('h2', { id: 'calls-title' }, 'Tool calls'), calls.element),
    h('div', { class: 'columns' }, h('section', {}, h('h2', {}, 'Code'), code), h('section', {}, h('h2', {}, 'Result'), result)),
    h('section', {}, h('h2', {}, 'Output'), output),
    h(
      'section',
      {},
      h('h2', {}, 'Events of this run'),
      h('div', { class: 'scroll', tabindex: 0, 'aria-label': 'Events of this run' }, events),
    ),
  );

  const runEvents: Event[] = [];
  let run: RunView | null = null;

  const drawRun = (): void => {
    if (!run) return;
    fill(title, run.title || run.runId);
    title.title = run.title || run.runId;
    fill(
      facts,
      fact('Status', statusBadge(run.status)),
      fact('Run id', h('span', { class: 'mono' }, run.runId)),
      fact('Worker', run.owner ?? '—'),
      fact('Requested', clock(run.createdAt)),
      fact('Duration', duration(between(run.startedAt ?? run.createdAt, run.endedAt))),
      fact('Restart-safe', run.restartSafe ? 'yes' : 'no'),
      run.expiresAt && run.status === 'waiting' ? fact('Parked until', clock(run.expiresAt)) : null,
    );
    fill(actions, ABORTABLE.has(run.status) ? abortButton() : null);
    drawResult(run.lastResult);
  };

  const drawResult = (last: CodeModeResult | null): void => {
    if (!last) {
      fill(result, notice('info', 'No result yet.', 'The run has not answered; this updates when it does.'));
      fill(output, notice('empty', 'No output yet.'));
      return;
    }
    const { output: lines, telemetry: _telemetry, ...rest } = last;
    fill(result, h('pre', { class: `code result-${last.status}`, id: 'run-result' }, json(rest)));
    fill(
      output,
      !lines || lines.length === 0
        ? notice(
            'empty',
            'The run printed nothing.',
            h('span', {}, 'Output is what the cell wrote with ', h('code', {}, 'console.log'), '.'),
          )
        : h(
            'pre',
            { class: 'code', id: 'run-output' },
            lines.map((line) => (line.type === 'text' ? line.text : json(line.value))).join('\n'),
          ),
    );
  };

  const abortButton = (): HTMLElement => {
    const button = h('button', { type: 'button', class: 'danger', id: 'abort-run' }, 'Abort run');
    button.addEventListener('click', () => {
      if (!window.confirm('Abort this run? Pending calls are cancelled and nothing it did is committed.')) return;
      button.setAttribute('disabled', '');
      fill(button, 'Aborting…');
      api<CodeModeResult>('DELETE', `${sessionPath(sid)}/runs/${encodeURIComponent(runId)}`, undefined, ctx.signal).then(
        () => void loadRun(),
        (error: unknown) => {
          if (error instanceof ApiProblem && error.status === 409) {
            fill(actions, notice('info', 'The run had already ended or is executing right now.', error.message));
            void loadRun();
            return;
          }
          showFailure(ctx, actions, error, 'the abort');
        },
      );
    });
    return button;
  };

  const loadRun = async (): Promise<void> => {
    try {
      run = await api<RunView>('GET', `${sessionPath(sid)}/runs/${encodeURIComponent(runId)}`, undefined, ctx.signal);
      drawRun();
    } catch (error) {
      if (error instanceof ApiProblem && error.status === 404) {
        fill(
          ctx.root,
          notice(
            'empty',
            `There is no run ${runId} in session “${sid}”.`,
            h('span', {}, 'It may have been trimmed by retention. ', h('a', { href: sessionHref(sid) }, 'Back to the session')),
          ),
        );
        return;
      }
      showFailure(ctx, facts, error, 'the run');
    }
  };

  let frame = 0;
  const redraw = (): void => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => {
      fill(timeline, runEvents.length === 0 ? notice('empty', 'No events for this run yet.') : timelineSvg(runEvents));
      calls.update(toolCallsOf(runEvents));
    });
  };
  // The open leg or park grows with the clock until the run ends.
  const ticker = window.setInterval(() => {
    if (run && ABORTABLE.has(run.status)) redraw();
  }, 1000);
  ctx.signal.addEventListener('abort', () => window.clearInterval(ticker), { once: true });

  void loadRun();
  void followEvents(sessionPath(sid), undefined, ctx.signal, {
    onEvent: (event) => {
      if (event.runId !== runId) return;
      runEvents.push(event);
      events.append(eventItem(sid, event));
      if (event.type === 'run.requested') fill(code, text(event.data.code));
      if (event.type.startsWith('run.')) void loadRun();
      redraw();
    },
  });
}

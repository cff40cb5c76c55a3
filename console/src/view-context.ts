import { ApiProblem, KeyRefused } from './api.js';
import { fill, h, notice, type Child } from './elements.js';

/** What a view gets: where to draw, and a signal that aborts when the operator navigates away. */
export interface ViewContext {
  readonly root: HTMLElement;
  readonly signal: AbortSignal;
  /** Asks the operator for a key again (the API refused the one held). */
  readonly askForKey: (reason: string) => void;
}

/** Runs `task` now and every `ms` until the view goes away; one run at a time. */
export function every(ms: number, signal: AbortSignal, task: () => Promise<void>): void {
  let timer: number | undefined;
  const tick = async (): Promise<void> => {
    await task();
    if (!signal.aborted) timer = window.setTimeout(() => void tick(), ms);
  };
  signal.addEventListener('abort', () => window.clearTimeout(timer), { once: true });
  void tick();
}

/**
 * Shows an API failure where the data would be, saying what to do about it; a refused key goes
 * back to the key form. Aborted requests (navigation) show nothing.
 */
export function showFailure(ctx: ViewContext, where: Element, error: unknown, what: string): void {
  if (ctx.signal.aborted) return;
  if (error instanceof KeyRefused) {
    ctx.askForKey('The API refused this key (401). Enter a key of CODEMODE_API_KEYS.');
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  const hint: Child =
    error instanceof ApiProblem && error.status === 503
      ? 'Redis is unreachable from the API; this view retries by itself.'
      : error instanceof ApiProblem && error.status === 0
        ? 'The API is not answering; this view retries by itself.'
        : 'This view retries by itself; reload the page if it persists.';
  fill(where, notice('error', `Could not load ${what}: ${message}`, hint));
}

/** A status word as a coloured badge (colour is never the only signal: the word is there). */
export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${status}` }, status);
}

/** A table with a caption for screen readers and a header row, scrolling sideways on a narrow screen. */
export function table(caption: string, headers: string[], rows: HTMLTableRowElement[]): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('caption', { class: 'sr-only' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((name) => h('th', { scope: 'col' }, name)),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

export const runHref = (sid: string, runId: string): string => `#/sessions/${encodeURIComponent(sid)}/runs/${encodeURIComponent(runId)}`;
export const sessionHref = (sid: string): string => `#/sessions/${encodeURIComponent(sid)}`;

/** A labelled value in a row of facts. */
export function fact(label: string, value: Child): HTMLElement {
  return h('div', { class: 'fact' }, h('span', { class: 'fact-label' }, label), h('span', { class: 'fact-value' }, value));
}

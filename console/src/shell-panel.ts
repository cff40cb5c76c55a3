import type { ShellAnswer, ShellSessionSummary } from '@codemode/contracts';
import { api, sessionPath } from './api.js';
import { fill, h, notice } from './elements.js';
import { duration } from './format.js';
import { every, showFailure, statusBadge, table, type ViewContext } from './view-context.js';

const REFRESH_MS = 2000;

/** Shell process sessions of a Code Mode session (`process list`), and a live log tail of the one picked. */
export function renderShellPanel(ctx: ViewContext, sid: string, root: HTMLElement): void {
  const list = h('div');
  const tail = h('pre', { class: 'code log', id: 'shell-log', 'aria-live': 'polite', tabindex: 0 });
  const tailTitle = h('h3', {});
  fill(root, list, tailTitle, tail);
  tail.hidden = true;
  let picked: string | null = null;

  const process = (body: Record<string, unknown>): Promise<ShellAnswer> =>
    api<ShellAnswer>('POST', `${sessionPath(sid)}/process`, body, ctx.signal);

  every(REFRESH_MS, ctx.signal, async () => {
    try {
      const answer = await process({ action: 'list' });
      const sessions = 'sessions' in answer.details ? answer.details.sessions : [];
      fill(
        list,
        sessions.length === 0
          ? notice(
              'empty',
              'No shell processes in this session.',
              'Commands started with shell exec and backgrounded show here with their output.',
            )
          : table(
              'Shell processes',
              ['Process', 'Status', 'Command', 'Runtime', 'Log'],
              sessions.map((p) => row(p, (id) => pick(id))),
            ),
      );
      if (picked) {
        const log = await process({ action: 'log', sessionId: picked, limit: 200 });
        fill(tail, log.text);
        tail.scrollTop = tail.scrollHeight;
      }
    } catch (error) {
      showFailure(ctx, list, error, 'the shell processes');
    }
  });

  function pick(id: string): void {
    picked = id;
    fill(tailTitle, `Log of ${id} (live)`);
    fill(tail, 'loading…');
    tail.hidden = false;
    tail.focus();
  }
}

function row(p: ShellSessionSummary, onPick: (id: string) => void): HTMLTableRowElement {
  return h(
    'tr',
    {},
    h('td', { class: 'mono' }, p.name ?? p.sessionId),
    h('td', {}, statusBadge(p.status)),
    h('td', { class: 'mono clip' }, p.command),
    h('td', { class: 'num' }, duration(p.runtimeMs)),
    h('td', {}, h('button', { type: 'button', onclick: () => onPick(p.sessionId) }, 'Tail log')),
  );
}

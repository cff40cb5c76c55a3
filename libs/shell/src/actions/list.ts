import type { ShellAnswer, ShellSessionSummary } from '@codemode/contracts';
import { formatDuration, padRight, sessionName, truncateMiddle } from '../format';
import type { SessionView } from '../session-view';
import { texts } from '../texts';
import { inputState, type ActionContext } from './action-context';

/** `list`: backgrounded running sessions and kept finished ones, newest first. */
export function listAction(ctx: ActionContext): ShellAnswer {
  const live = ctx.store.visible(ctx.scope);
  const liveIds = new Set(live.map((s) => s.id));
  const recorded = ctx.recorded.filter((s) => s.scope === ctx.scope && !liveIds.has(s.id));
  // Stable sort keeps start order for sessions started in the same millisecond.
  const views: SessionView[] = [...live, ...recorded].sort((a, b) => b.startedAt - a.startedAt);
  const sessions = views.map((view) => summarize(ctx, view));
  const lines = sessions.map((s) => {
    const label = s.name ? truncateMiddle(s.name, 80) : truncateMiddle(s.command, 120);
    const markers = `${s.timedOut ? ' [timeout]' : ''}${s.waitingForInput ? ' [input-wait]' : ''}`;
    return `${s.sessionId} ${padRight(s.status, 9)} ${formatDuration(s.runtimeMs)}${markers} :: ${label}`;
  });
  return { text: lines.join('\n') || texts.noSessions, details: { status: 'completed', sessions } };
}

function summarize(ctx: ActionContext, view: SessionView): ShellSessionSummary {
  const base = {
    sessionId: view.id,
    status: view.status,
    startedAt: view.startedAt,
    runtimeMs: (view.endedAt ?? ctx.now()) - view.startedAt,
    cwd: view.cwd,
    command: view.command,
    name: sessionName(view.command),
    tail: view.tail,
    truncated: view.truncated,
  };
  if (view.status === 'running') return { ...base, pid: view.pid, ...inputState(ctx, view) };
  return {
    ...base,
    exitCode: view.exitCode ?? null,
    ...(view.exitSignal ? { exitSignal: view.exitSignal } : {}),
    ...(view.timedOut ? { timedOut: true } : {}),
    ...(view.endedAt !== undefined ? { endedAt: view.endedAt } : {}),
  };
}

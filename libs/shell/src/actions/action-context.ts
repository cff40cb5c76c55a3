import type { ProcessInput, ShellAnswer } from '@codemode/contracts';
import { formatDuration, sessionName } from '../format';
import type { ProcessSession } from '../process-session';
import type { SessionStore } from '../session-store';
import type { SessionView } from '../session-view';
import { texts } from '../texts';

/** Everything one `process` call needs. */
export interface ActionContext {
  scope: string;
  input: ProcessInput;
  store: SessionStore;
  /** Sessions of this scope rebuilt from the event log whose worker is gone (finished or lost). */
  recorded: readonly SessionView[];
  now: () => number;
  inputWaitIdleMs: number;
  /** `process` over REST, the process tool's callable (`process_<hex>`) inside a cell. */
  tool: string;
}

export const failed = (text: string): ShellAnswer => ({ text, details: { status: 'failed' } });

/** A live, running session of the scope (backgrounded or not). */
export function liveRunning(ctx: ActionContext, id: string): ProcessSession | undefined {
  return ctx.store.getRunning(ctx.scope, id);
}

/** A kept finished session: live ones first, then recorded ones (including `lost`). */
export function finishedView(ctx: ActionContext, id: string): SessionView | undefined {
  return ctx.store.getFinished(ctx.scope, id) ?? ctx.recorded.find((s) => s.id === id && s.scope === ctx.scope && s.status !== 'running');
}

export interface InputState {
  stdinWritable: boolean;
  waitingForInput: boolean;
  idleMs: number;
  lastOutputAt: number;
}

export function inputState(ctx: ActionContext, session: SessionView): InputState {
  const idleMs = Math.max(0, ctx.now() - session.lastOutputAt);
  const stdinWritable = session.status === 'running' && session.stdinWritable;
  return { stdinWritable, waitingForInput: stdinWritable && idleMs >= ctx.inputWaitIdleMs, idleMs, lastOutputAt: session.lastOutputAt };
}

/** The `No new output for …` hint, with its blank-line separator, or nothing. */
export function inputWaitHint(ctx: ActionContext, state: InputState | undefined): string {
  return state?.waitingForInput ? `\n\n${texts.inputWaitHint(formatDuration(state.idleMs), ctx.tool)}` : '';
}

/**
 * How `poll` reports a finished session: `Process exited with code N.` (or `signal S`), or, for
 * one its timeout ended, `Process exited with timeout.` and the timed-out guidance. A timeout is
 * what the session recorded, never guessed from the exit: a confined command killed by a signal
 * may report `128+N` as its code.
 */
export function exitedText(view: SessionView): string {
  if (view.timedOut) return `${texts.exitedWithTimeout}\n\n${timedOutGuidance(view)}`;
  const exited = texts.exitedWith(view.exitSignal ? `signal ${view.exitSignal}` : `code ${view.exitCode ?? 0}`);
  return view.stoppedReason ? `${exited}\n\n${view.stoppedReason}` : exited;
}

/** `Command timed out after <N> seconds. …` for a session its timeout ended. */
export function timedOutGuidance(view: SessionView): string {
  return texts.timedOut(view.timeoutSeconds ?? 0);
}

/** Exit fields of a finished (or lost) session, as `poll`, `log` and `list` report them. */
export function finishedDetails(view: SessionView) {
  return {
    status: view.status === 'completed' ? ('completed' as const) : view.status === 'lost' ? ('lost' as const) : ('failed' as const),
    sessionId: view.id,
    exitCode: view.exitCode ?? null,
    ...(view.exitSignal ? { exitSignal: view.exitSignal } : {}),
    ...(view.timedOut ? { timedOut: true } : {}),
    name: sessionName(view.command),
  };
}

/** Note shown when the aggregate cap dropped old output. */
export function retentionNote(view: SessionView): string {
  return view.totalOutputChars > view.aggregated.length ? `${texts.retentionCap(view.maxOutputChars)}\n\n` : '';
}

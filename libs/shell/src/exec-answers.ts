import type { ShellAnswer } from '@codemode/contracts';
import type { ProcessSession } from './process-session';
import { texts } from './texts';

/** Bounds of `yieldMs` (SPEC §7). */
export const MIN_YIELD_MS = 10;
export const MAX_YIELD_MS = 120_000;

/**
 * How long `exec` waits in the foreground. Inside a cell without `yieldMs`/`background`, a
 * quarter of the cell's remaining budget (1 ms–1 s, not clamped to the REST bounds), so a long
 * command comes back as a running session instead of timing the cell out.
 */
export function yieldDelay(yieldMs: number | undefined, backgroundMs: number, remainingBudgetMs?: number): number {
  if (yieldMs !== undefined && Number.isFinite(yieldMs)) return clampYield(yieldMs);
  if (remainingBudgetMs !== undefined) return Math.max(1, Math.min(1000, Math.floor(remainingBudgetMs / 4)));
  return clampYield(backgroundMs);
}

const clampYield = (ms: number) => Math.min(Math.max(Math.floor(ms), MIN_YIELD_MS), MAX_YIELD_MS);

/** The answer for a command that is (still) running in the background. */
export function runningAnswer(session: ProcessSession, tool: string): ShellAnswer {
  return {
    text: texts.stillRunning(session.id, session.pid, tool),
    details: { status: 'running', sessionId: session.id, pid: session.pid, startedAt: session.startedAt, tail: session.tail },
  };
}

/** The answer for a command that ended before its yield. */
export function finishedAnswer(session: ProcessSession, timeoutSeconds: number): ShellAnswer {
  const aggregated = session.aggregated.trim();
  const code = session.exitCode ?? null;
  const parts = [aggregated || texts.noOutput];
  if (code !== null && code !== 0) parts.push(texts.exitedWithCode(code));
  const reason = failureReason(session, timeoutSeconds);
  if (reason) parts.push(reason);
  return {
    text: parts.join('\n\n'),
    details: {
      status: session.status === 'completed' ? 'completed' : 'failed',
      exitCode: code,
      ...(session.exitSignal ? { exitSignal: session.exitSignal } : {}),
      ...(session.timedOut ? { timedOut: true } : {}),
      aggregated,
      durationMs: session.durationMs,
      cwd: session.cwd,
    },
  };
}

/** Why a command counts as failed: a workspace limit, timeout, signal, or the shell's 126/127. */
function failureReason(session: ProcessSession, timeoutSeconds: number): string | undefined {
  if (session.status !== 'failed') return undefined;
  if (session.stoppedReason) return session.stoppedReason;
  if (session.timedOut) return texts.timedOut(timeoutSeconds);
  if (session.exitSignal) return texts.abortedBySignal(session.exitSignal);
  if (session.exitCode === 127) return texts.commandNotFound;
  if (session.exitCode === 126) return texts.notExecutable;
  return undefined;
}

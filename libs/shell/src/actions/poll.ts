import { PollTimeoutSchema, type ShellAnswer } from '@codemode/contracts';
import { sessionName } from '../format';
import type { SessionView } from '../session-view';
import { texts } from '../texts';
import {
  exitedText,
  failed,
  finishedDetails,
  finishedView,
  inputState,
  inputWaitHint,
  liveRunning,
  retentionNote,
  type ActionContext,
} from './action-context';

/** Longest `timeout` a poll waits for output (SPEC §7). */
export const MAX_POLL_WAIT_MS = 30_000;

/**
 * `details.retryInMs` of consecutive polls that bring no new output (SPEC §7): models that poll
 * in a tight loop are told to back off; new output starts the sequence over.
 */
export const POLL_RETRY_MS = [5_000, 10_000, 30_000, 60_000] as const;

/**
 * How long a poll waits: `timeout` as a number or an integer string, clamped to 0–30000 ms.
 * Call it on input `PollTimeoutSchema` accepted; anything else waits 0.
 */
export function pollWaitMs(timeout: unknown): number {
  const parsed = PollTimeoutSchema.safeParse(timeout);
  const ms = parsed.success ? Number(parsed.data) : 0;
  return Number.isFinite(ms) ? Math.max(0, Math.min(MAX_POLL_WAIT_MS, Math.floor(ms))) : 0;
}

/** The `retryInMs` of the `quietPolls`-th poll in a row without new output (1-based). */
export function retryInMsAfter(quietPolls: number): number {
  return POLL_RETRY_MS[Math.min(Math.max(quietPolls, 1), POLL_RETRY_MS.length) - 1];
}

/** `poll`: the output since the last poll, and whether the process is still running. */
export async function pollAction(ctx: ActionContext, id: string): Promise<ShellAnswer> {
  const running = liveRunning(ctx, id);
  if (!running) {
    const finished = finishedView(ctx, id);
    // An unknown id answers at once, never after waiting out the poll timeout.
    return finished ? finishedPoll(finished) : failed(texts.noSession(id));
  }
  if (!running.backgrounded || running.removed) return failed(texts.notBackgrounded(id));
  const waitMs = pollWaitMs(ctx.input.timeout);
  if (waitMs > 0) await running.waitForActivity(waitMs);
  if (running.exited) return running.backgrounded && !running.removed ? finishedPoll(running) : failed(texts.noSession(id));
  const { output, dropped } = running.drainPending();
  const fresh = output.trim();
  const quiet = !fresh && !dropped;
  running.quietPolls = quiet ? running.quietPolls + 1 : 0;
  const state = inputState(ctx, running);
  const body = fresh || texts.noNewOutput;
  const text = `${retentionNote(running)}${dropped ? `${texts.pendingDropped}\n\n` : ''}${body}\n\n${texts.stillRunningPoll}${inputWaitHint(ctx, state)}`;
  return {
    text,
    details: {
      status: 'running',
      sessionId: id,
      name: sessionName(running.command),
      aggregated: running.aggregated,
      ...state,
      ...(quiet ? { retryInMs: retryInMsAfter(running.quietPolls) } : {}),
    },
  };
}

function finishedPoll(view: SessionView): ShellAnswer {
  const { output, dropped } = view.drainPending();
  const body = output.trim() || texts.noNewOutput;
  const ending = view.status === 'lost' ? texts.lostPoll : exitedText(view);
  const text = `${retentionNote(view)}${dropped ? `${texts.pendingDropped}\n\n` : ''}${body}\n\n${ending}`;
  return { text, details: { ...finishedDetails(view), aggregated: view.aggregated } };
}

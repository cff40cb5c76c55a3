import type { ShellAnswer } from '@codemode/contracts';
import { sessionName } from '../format';
import type { SessionView } from '../session-view';
import { texts } from '../texts';
import {
  exitLabel, failed, finishedDetails, finishedView, inputState, inputWaitHint, liveRunning, retentionNote,
  type ActionContext,
} from './action-context';

/** Longest `timeout` a poll waits for output (SPEC §7). */
export const MAX_POLL_WAIT_MS = 30_000;

/** `poll`: the output since the last poll, and whether the process is still running. */
export async function pollAction(ctx: ActionContext, id: string): Promise<ShellAnswer> {
  const running = liveRunning(ctx, id);
  if (!running) {
    const finished = finishedView(ctx, id);
    // An unknown id answers at once, never after waiting out the poll timeout.
    return finished ? finishedPoll(finished) : failed(texts.noSession(id));
  }
  if (!running.backgrounded || running.removed) return failed(texts.notBackgrounded(id));
  const waitMs = Math.max(0, Math.min(MAX_POLL_WAIT_MS, Math.floor(ctx.input.timeout ?? 0)));
  if (waitMs > 0) await running.waitForActivity(waitMs);
  if (running.exited) return running.backgrounded && !running.removed ? finishedPoll(running) : failed(texts.noSession(id));
  const { output, dropped } = running.drainPending();
  const state = inputState(ctx, running);
  const body = output.trim() || texts.noNewOutput;
  const text = `${retentionNote(running)}${dropped ? `${texts.pendingDropped}\n\n` : ''}${body}\n\n${texts.stillRunningPoll}${inputWaitHint(ctx, state)}`;
  return {
    text,
    details: { status: 'running', sessionId: id, name: sessionName(running.command), aggregated: running.aggregated, ...state },
  };
}

function finishedPoll(view: SessionView): ShellAnswer {
  const { output, dropped } = view.drainPending();
  const body = output.trim() || texts.noNewOutput;
  const ending = view.status === 'lost' ? texts.lostPoll : texts.exitedWith(exitLabel(view));
  const text = `${retentionNote(view)}${dropped ? `${texts.pendingDropped}\n\n` : ''}${body}\n\n${ending}`;
  return { text, details: { ...finishedDetails(view), aggregated: view.aggregated } };
}

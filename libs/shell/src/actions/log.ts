import type { ShellAnswer } from '@codemode/contracts';
import { sessionName, sliceLines } from '../format';
import { texts } from '../texts';
import {
  failed,
  finishedDetails,
  finishedView,
  inputState,
  inputWaitHint,
  liveRunning,
  retentionNote,
  timedOutGuidance,
  type ActionContext,
} from './action-context';

/** Lines shown by a `log` without `offset` or `limit`. */
export const DEFAULT_LOG_TAIL_LINES = 200;

/** `log`: the kept output by lines; the last 200 lines unless `offset`/`limit` page it. */
export function logAction(ctx: ActionContext, id: string): ShellAnswer {
  const running = liveRunning(ctx, id);
  const view = running ?? finishedView(ctx, id);
  if (!view) return failed(texts.noSession(id));
  if (running && (!running.backgrounded || running.removed)) return failed(texts.notBackgrounded(id));
  const { offset, limit } = ctx.input;
  const defaultTail = offset === undefined && limit === undefined;
  const window = sliceLines(view.aggregated, offset, defaultTail ? DEFAULT_LOG_TAIL_LINES : limit);
  const note =
    defaultTail && window.totalLines > DEFAULT_LOG_TAIL_LINES ? `\n\n${texts.logTailNote(DEFAULT_LOG_TAIL_LINES, window.totalLines)}` : '';
  const body = window.slice || (running ? texts.noOutputYet : texts.noOutputRecorded);
  const paging = { totalLines: window.totalLines, totalChars: window.totalChars, truncated: view.truncated };
  if (running) {
    const state = inputState(ctx, running);
    return {
      text: `${retentionNote(view)}${body}${note}${inputWaitHint(ctx, state)}`,
      details: { status: 'running', sessionId: id, name: sessionName(running.command), ...state, ...paging },
    };
  }
  // A session its timeout or a workspace limit ended says so, after its output or instead of
  // `(no output recorded)`.
  const ending = view.timedOut ? timedOutGuidance(view) : view.stoppedReason;
  const text = !ending ? `${body}${note}` : window.slice ? `${window.slice}${note}\n\n${ending}` : ending;
  return { text: `${retentionNote(view)}${text}`, details: { ...finishedDetails(view), ...paging } };
}

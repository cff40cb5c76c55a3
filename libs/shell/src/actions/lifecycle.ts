import type { ShellAnswer } from '@codemode/contracts';
import { sessionName } from '../format';
import { texts } from '../texts';
import { failed, finishedView, liveRunning, type ActionContext } from './action-context';

const done = (id: string, text: string, command?: string): ShellAnswer => ({
  text,
  details: { status: 'completed', sessionId: id, ...(command ? { name: sessionName(command) } : {}) },
});

/** `kill`: SIGTERM to the session's process tree, SIGKILL after a grace period. */
export function killAction(ctx: ActionContext, id: string): ShellAnswer {
  const session = liveRunning(ctx, id);
  if (!session) return failed(texts.noActiveSession(id));
  if (!session.backgrounded || session.removed) return failed(texts.notBackgrounded(id));
  session.terminate();
  return done(id, texts.killRequested(id), session.command);
}

/** `clear`: forgets a finished session. */
export function clearAction(ctx: ActionContext, id: string): ShellAnswer {
  const finished = finishedView(ctx, id);
  if (!finished) return failed(texts.noFinishedSession(id));
  ctx.store.delete(id);
  return done(id, texts.cleared(id));
}

/** `remove`: forgets a finished session, or ends a running one and forgets it at once. */
export function removeAction(ctx: ActionContext, id: string): ShellAnswer {
  const session = liveRunning(ctx, id);
  if (session) {
    if (!session.backgrounded || session.removed) return failed(texts.notBackgrounded(id));
    session.terminate();
    ctx.store.delete(id);
    return done(id, texts.removed(id, true), session.command);
  }
  if (!finishedView(ctx, id)) return failed(texts.noSession(id));
  ctx.store.delete(id);
  return done(id, texts.removed(id, false));
}

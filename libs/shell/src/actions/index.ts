import { PollTimeoutSchema, PROCESS_ACTIONS, type ProcessAction, type ShellAnswer } from '@codemode/contracts';
import { ProcessInputError } from '../errors';
import { texts } from '../texts';
import { failed, type ActionContext } from './action-context';
import { clearAction, killAction, removeAction } from './lifecycle';
import { pasteAction, sendKeysAction, submitAction, writeAction } from './input';
import { listAction } from './list';
import { logAction } from './log';
import { pollAction } from './poll';

export type { ActionContext } from './action-context';

type SessionAction = (ctx: ActionContext, id: string) => ShellAnswer | Promise<ShellAnswer>;

const SESSION_ACTIONS: Record<Exclude<ProcessAction, 'list'>, SessionAction> = {
  poll: pollAction,
  log: logAction,
  write: writeAction,
  'send-keys': sendKeysAction,
  submit: submitAction,
  paste: pasteAction,
  kill: killAction,
  clear: clearAction,
  remove: removeAction,
};

const isAction = (value: string): value is ProcessAction => (PROCESS_ACTIONS as readonly string[]).includes(value);

/**
 * Runs one `process` call; every outcome, errors included, is an answer.
 * @throws ProcessInputError for a `timeout` of the wrong type, which only a cell can send (the
 * API refuses such a body with 400 before it reaches a worker).
 */
export async function runProcessAction(ctx: ActionContext): Promise<ShellAnswer> {
  checkTimeout(ctx);
  const action = ctx.input.action;
  if (!isAction(action)) return failed(texts.invalidAction);
  if (action === 'list') return listAction(ctx);
  const id = ctx.input.sessionId;
  if (!id) return failed(texts.sessionIdRequired);
  return SESSION_ACTIONS[action](ctx, id);
}

function checkTimeout(ctx: ActionContext): void {
  if (ctx.input.timeout === undefined) return;
  const parsed = PollTimeoutSchema.safeParse(ctx.input.timeout);
  if (!parsed.success) throw new ProcessInputError(ctx.tool, 'timeout', parsed.error.issues[0]?.message ?? 'is invalid');
}

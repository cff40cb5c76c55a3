import type { ShellAnswer } from '@codemode/contracts';
import { sessionName } from '../format';
import { encodeKeys, encodePaste } from '../key-table';
import type { ProcessSession } from '../process-session';
import { texts } from '../texts';
import { failed, liveRunning, type ActionContext } from './action-context';

/** The session whose stdin an input action writes to, or the error answer explaining why not. */
function writableSession(ctx: ActionContext, id: string): ProcessSession | ShellAnswer {
  const session = liveRunning(ctx, id);
  if (!session) return failed(texts.noActiveSession(id));
  if (!session.backgrounded || session.removed) return failed(texts.notBackgrounded(id));
  if (!session.stdinWritable) return failed(texts.stdinNotWritable(id));
  return session;
}

/** Writes, answering "not writable" if the child closed its stdin meanwhile (EPIPE). */
async function send(session: ProcessSession, data: string | Buffer, answer: () => ShellAnswer): Promise<ShellAnswer> {
  try {
    await session.write(data);
  } catch {
    return failed(texts.stdinNotWritable(session.id));
  }
  return answer();
}

const isAnswer = (value: ProcessSession | ShellAnswer): value is ShellAnswer => 'details' in value;

const runningAnswer = (session: ProcessSession, text: string): ShellAnswer => ({
  text,
  details: { status: 'running', sessionId: session.id, name: sessionName(session.command) },
});

/** `write`: `data` as is; `eof` then closes stdin (under a pty, `script` passes EOF on). */
export async function writeAction(ctx: ActionContext, id: string): Promise<ShellAnswer> {
  const session = writableSession(ctx, id);
  if (isAnswer(session)) return session;
  const data = ctx.input.data ?? '';
  const eof = ctx.input.eof === true;
  return send(session, data, () => {
    if (eof) session.endStdin();
    return runningAnswer(session, texts.wrote(Buffer.byteLength(data, 'utf8'), id, eof));
  });
}

/** `send-keys`: `literal` text, `hex` bytes and named `keys` (`C-c`, `Enter`, `Up`, …). */
export async function sendKeysAction(ctx: ActionContext, id: string): Promise<ShellAnswer> {
  const session = writableSession(ctx, id);
  if (isAnswer(session)) return session;
  const { data, warnings } = encodeKeys(ctx.input, session.cursorKeyMode);
  if (data.length === 0) return failed(texts.noKeyData);
  const warningText = warnings.length ? `\nWarnings:\n- ${warnings.join('\n- ')}` : '';
  return send(session, data, () => runningAnswer(session, `${texts.sentKeys(data.length, id)}${warningText}`));
}

/** `submit`: a carriage return, what Enter sends on a terminal. */
export async function submitAction(ctx: ActionContext, id: string): Promise<ShellAnswer> {
  const session = writableSession(ctx, id);
  if (isAnswer(session)) return session;
  return send(session, '\r', () => runningAnswer(session, texts.submitted(id)));
}

/** `paste`: `text`, wrapped in bracketed-paste markers unless `bracketed:false`. */
export async function pasteAction(ctx: ActionContext, id: string): Promise<ShellAnswer> {
  const session = writableSession(ctx, id);
  if (isAnswer(session)) return session;
  const text = ctx.input.text ?? '';
  if (!text) return failed(texts.noPasteText);
  return send(session, encodePaste(text, ctx.input.bracketed !== false), () => runningAnswer(session, texts.pasted(text.length, id)));
}

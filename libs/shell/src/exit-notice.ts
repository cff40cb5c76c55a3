import type { ShellConfig, ShellExitedData, ShellExitNotification } from '@codemode/contracts';

/** What decides whether a background session's end is POSTed, and what the POST says (SPEC §7). */
export interface ExitNoticeInput {
  /** The `shell.exited` data of the session that ended. */
  readonly exited: ShellExitedData;
  /** Its last 2000 characters of output, as the running answer's `tail`. */
  readonly tail: string;
  /** The Code Mode session it ran for. */
  readonly sessionId: string;
  /** The agent scope it ran in (null: the session's own scope). */
  readonly agentId: string | null;
  /** The session's settings when it ended. */
  readonly shell: Pick<ShellConfig, 'notifyOnExit' | 'notifyOnExitEmptySuccess'>;
  readonly notifyUrl: string | null;
}

/**
 * The exit notification to send, or null when none is due: only background sessions (started with
 * `background:true`, or yielded and answered as running) are notified, only when the session has
 * a `notifyUrl` and `notifyOnExit` is on; a successful exit that printed nothing (or only
 * whitespace) only with `notifyOnExitEmptySuccess`. A foreground exit was already the answer.
 */
export function exitNotice(input: ExitNoticeInput): ShellExitNotification | null {
  const { exited, tail } = input;
  if (input.notifyUrl === null || !input.shell.notifyOnExit || !exited.backgrounded) return null;
  const emptySuccess = exited.status === 'completed' && exited.exitCode === 0 && tail.trim() === '';
  if (emptySuccess && !input.shell.notifyOnExitEmptySuccess) return null;
  return {
    sessionId: input.sessionId,
    agentId: input.agentId,
    processSessionId: exited.sessionId,
    status: exited.status,
    exitCode: exited.exitCode,
    ...(exited.exitSignal === null ? {} : { exitSignal: exited.exitSignal }),
    ...(exited.timedOut ? { timedOut: true } : {}),
    tail,
  };
}

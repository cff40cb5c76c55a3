import type { ProcessInput, ShellAnswer, ShellConfig } from '@codemode/contracts';
import { runProcessAction } from './actions';
import { SessionStore } from './session-store';
import type { SessionView } from './session-view';

/**
 * Answers a `process` call from recorded sessions alone, for a scope no live worker holds
 * (every worker that ran its commands is gone). `list`, `poll` and `log` read the records;
 * input actions and `kill` answer `No active session found for <id>`; `clear`/`remove` answer
 * as usual and the caller must remember the removal (the registry holds nothing to delete).
 */
export function answerFromHistory(
  scope: string,
  input: ProcessInput,
  recorded: readonly SessionView[],
  config: ShellConfig,
  opts: { now?: () => number; processCallable?: string } = {},
): Promise<ShellAnswer> {
  const now = opts.now ?? Date.now;
  return runProcessAction({
    scope,
    input,
    store: new SessionStore(now),
    recorded,
    now,
    inputWaitIdleMs: config.inputWaitIdleMs,
    tool: opts.processCallable ?? 'process',
  });
}

import type { CodeModeResult, ShellAnswer } from '@codemode/contracts';
import { UsageError } from './errors';

/** The CLI's exit codes (issue 7): scripts branch on them. */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  /**
   * exec/wait left a run that waits only for the platform's answers to its pending tool calls
   * (SPEC §18): waiting again would answer the same, so the CLI stops; post the answers
   * (`POST …/runs/{runId}/tool-results`), then `codemode wait <runId>`.
   */
  awaitsPlatform: 3,
  /** Ctrl-C during exec/wait, as shells report SIGINT (128 + 2); the run itself is left as it was. */
  interrupted: 130,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** completed → 0, failed → 1; `waiting` is only final with --no-wait, where it counts as success. */
export function exitCodeForResult(result: CodeModeResult): ExitCodeValue {
  return result.status === 'failed' ? ExitCode.failed : ExitCode.ok;
}

/**
 * A command that finished with exit code 0 → 0; a non-zero exit, a signal or a tool-level error
 * → 1 (the command's own code is in the text: 2 stays reserved for usage); backgrounded → 0.
 * The exit code is checked as well as the status: a non-zero exit can still be `completed`.
 */
export function exitCodeForShell(answer: ShellAnswer): ExitCodeValue {
  const { details } = answer;
  if (details.status === 'failed') return ExitCode.failed;
  if ('exitCode' in details && details.exitCode !== 0 && details.exitCode !== undefined) return ExitCode.failed;
  return ExitCode.ok;
}

/** Anything thrown out of a command: usage errors → 2, everything else (HTTP, connection, files) → 1. */
export function exitCodeForError(error: unknown): ExitCodeValue {
  return error instanceof UsageError ? ExitCode.usage : ExitCode.failed;
}

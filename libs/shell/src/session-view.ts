import type { ShellStatus } from '@codemode/contracts';

/**
 * What the `list`, `poll` and `log` answers read from a session. A live `ProcessSession`
 * implements it, and so does a session rebuilt from the event log after its worker is gone.
 */
export interface SessionView {
  readonly id: string;
  readonly scope: string;
  readonly command: string;
  readonly cwd: string;
  readonly startedAt: number;
  readonly status: ShellStatus;
  readonly backgrounded: boolean;
  readonly pid: number;
  readonly endedAt?: number;
  readonly exitCode?: number | null;
  readonly exitSignal?: string | null;
  readonly timedOut: boolean;
  /** The timeout the command ran with, named by the timed-out guidance; unknown for old records. */
  readonly timeoutSeconds?: number;
  /** Set when the service stopped it for a workspace limit: the limit's message. */
  readonly stoppedReason?: string;
  readonly aggregated: string;
  readonly tail: string;
  readonly truncated: boolean;
  /** Every character the command printed, including what the caps dropped. */
  readonly totalOutputChars: number;
  readonly maxOutputChars: number;
  readonly lastOutputAt: number;
  readonly stdinWritable: boolean;
  /** Output not yet returned by a `poll`, and whether some was dropped by the pending cap. */
  drainPending(): { output: string; dropped: boolean };
}

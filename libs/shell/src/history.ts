import {
  ShellExitedDataSchema,
  ShellOutputDataSchema,
  ShellStartedDataSchema,
  type ShellStatus,
  ShellRemovedDataSchema,
} from '@codemode/contracts';
import { OutputBuffer } from './output-buffer';
import type { SessionView } from './session-view';

/** A shell event as read back from the event log (only `type` and `data` are used). */
export interface RecordedShellEvent {
  type: string;
  data: unknown;
}

export interface RebuildOptions {
  /** Whether the worker that started this session still owns it (then it answers itself). */
  isOwnerAlive?: (sessionId: string) => boolean;
  /** Aggregate cap applied while replaying output. @default 200000 */
  maxOutputChars?: number;
  /** With `cleanupMs`, finished sessions older than this are left out. */
  now?: number;
  cleanupMs?: number;
}

/** A session rebuilt from its `shell.*` events. Its output is read-only; nothing is pending. */
class RecordedSession implements SessionView {
  status: ShellStatus = 'running';
  backgrounded: boolean;
  endedAt: number | undefined;
  exitCode: number | null | undefined;
  exitSignal: string | null = null;
  timedOut = false;
  timeoutSeconds: number | undefined;
  stoppedReason: string | undefined;
  lastOutputAt: number;
  readonly stdinWritable = false;
  readonly buffer: OutputBuffer;

  constructor(
    readonly id: string,
    readonly scope: string,
    readonly command: string,
    readonly cwd: string,
    readonly pid: number,
    readonly startedAt: number,
    backgrounded: boolean,
    maxOutputChars: number,
  ) {
    this.backgrounded = backgrounded;
    this.lastOutputAt = startedAt;
    this.buffer = new OutputBuffer(maxOutputChars, maxOutputChars);
  }

  get aggregated(): string {
    return this.buffer.aggregated;
  }
  get tail(): string {
    return this.buffer.tail;
  }
  get truncated(): boolean {
    return this.buffer.truncated;
  }
  get totalOutputChars(): number {
    return this.buffer.totalChars;
  }
  get maxOutputChars(): number {
    return this.buffer.maxOutputChars;
  }

  /** A recorded session has no poll cursor: a poll returns all it kept. */
  drainPending(): { output: string; dropped: boolean } {
    return { output: this.buffer.aggregated, dropped: false };
  }
}

/**
 * Rebuilds the sessions a `list`/`poll`/`log` can still show after their worker is gone, from
 * one scope's `shell.started`/`shell.output`/`shell.exited` events in log order:
 * - finished backgrounded sessions keep their exit and recorded output;
 * - a session with no exit whose worker is gone is `lost` (its recorded output stays readable);
 * - foreground-finished sessions, and running ones whose worker is alive, are left out (the
 *   first already answered, the second is answered by its own worker).
 * Pass the result to `ProcessRegistry.process(…, { recorded })` or `answerFromHistory`.
 */
export function rebuildSessions(events: Iterable<RecordedShellEvent>, opts: RebuildOptions = {}): SessionView[] {
  const sessions = new Map<string, RecordedSession>();
  for (const event of events) {
    if (event.type === 'shell.started') {
      const d = ShellStartedDataSchema.safeParse(event.data);
      if (!d.success) continue;
      const s = d.data;
      sessions.set(
        s.sessionId,
        new RecordedSession(s.sessionId, s.scope, s.command, s.cwd, s.pid, s.startedAt, s.backgrounded, opts.maxOutputChars ?? 200_000),
      );
    } else if (event.type === 'shell.output') {
      const d = ShellOutputDataSchema.safeParse(event.data);
      const session = d.success ? sessions.get(d.data.sessionId) : undefined;
      session?.buffer.append(d.data!.stream, d.data!.text);
    } else if (event.type === 'shell.exited') {
      const d = ShellExitedDataSchema.safeParse(event.data);
      const session = d.success ? sessions.get(d.data.sessionId) : undefined;
      if (!session || !d.success) continue;
      Object.assign(session, {
        status: d.data.status,
        exitCode: d.data.exitCode,
        exitSignal: d.data.exitSignal,
        timedOut: d.data.timedOut,
        endedAt: d.data.endedAt,
        backgrounded: d.data.backgrounded,
        lastOutputAt: d.data.endedAt,
        // Logs written before `timeoutSeconds` was recorded: the timer fired after that many whole seconds.
        timeoutSeconds: d.data.timeoutSeconds ?? Math.floor(d.data.durationMs / 1000),
        stoppedReason: d.data.stoppedReason,
      });
      if (d.data.droppedChars > 0) session.buffer.truncated = true;
    } else if (event.type === 'shell.removed') {
      // `clear`/`remove` took it out of the scope: history must not bring it back.
      const d = ShellRemovedDataSchema.safeParse(event.data);
      if (d.success) sessions.delete(d.data.sessionId);
    }
  }
  const out: SessionView[] = [];
  for (const s of sessions.values()) {
    if (s.status === 'running') {
      if (opts.isOwnerAlive?.(s.id) ?? false) continue;
      s.status = 'lost';
      out.push(s);
      continue;
    }
    if (!s.backgrounded) continue;
    if (opts.now !== undefined && opts.cleanupMs !== undefined && (s.endedAt ?? 0) + opts.cleanupMs <= opts.now) continue;
    out.push(s);
  }
  return out;
}

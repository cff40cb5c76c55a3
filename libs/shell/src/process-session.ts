import type { ShellConfig } from '@codemode/contracts';
import { OutputBuffer, type OutputStream } from './output-buffer';
import type { CursorKeyMode } from './key-table';
import type { ConfinedSpawn, ProcessExit, ProcessSpawner, SpawnedProcess } from './process-spawner';
import type { SessionView } from './session-view';
import { OutputEventRecorder, type ShellEventListener } from './shell-events';

/** Time between SIGTERM and SIGKILL when a session is ended. */
export const KILL_GRACE_MS = 1000;

export interface SessionStart {
  id: string;
  scope: string;
  command: string;
  /** The host path, or the path inside the sandbox when `confined` is set; answers show it. */
  cwd: string;
  env: Record<string, string>;
  confined?: ConfinedSpawn;
  pty: boolean;
  background: boolean;
  timeoutSeconds: number;
  config: ShellConfig;
  now: () => number;
  emit: ShellEventListener;
}

/** Exit codes a shell uses for "not found" (127) and "found but not executable" (126). */
const SHELL_FAILURE_CODES = new Set([126, 127]);

/** One command started by `exec`: its process, output, timers and exit. */
export class ProcessSession implements SessionView {
  readonly buffer: OutputBuffer;
  readonly startedAt: number;
  readonly cleanupMs: number;
  status: 'running' | 'completed' | 'failed' = 'running';
  backgrounded: boolean;
  /** `remove` asked for it while running: it is not kept once it exits. */
  removed = false;
  exitCode: number | null | undefined;
  exitSignal: NodeJS.Signals | null = null;
  timedOut = false;
  /** Set when the service stopped it for a workspace limit: what its answers say (SPEC §10). */
  stoppedReason: string | undefined;
  endedAt: number | undefined;
  lastOutputAt: number;
  cursorKeyMode: CursorKeyMode = 'normal';
  /** Polls in a row that brought no new output; sets the next poll's `retryInMs`. */
  quietPolls = 0;
  /** Resolves once the process has exited and the session is final. */
  readonly done: Promise<void>;
  private proc!: SpawnedProcess;
  private readonly recorder: OutputEventRecorder;
  private readonly waiters = new Set<() => void>();
  private timeoutTimer: NodeJS.Timeout | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private resolveDone!: () => void;

  private constructor(private readonly init: SessionStart) {
    this.startedAt = init.now();
    this.lastOutputAt = this.startedAt;
    this.backgrounded = init.background;
    this.cleanupMs = init.config.cleanupMs;
    this.buffer = new OutputBuffer(init.config.maxOutputChars, init.config.pendingMaxOutputChars);
    this.recorder = new OutputEventRecorder(init.emit, { sessionId: init.id, scope: init.scope }, init.config.maxOutputChars);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  /** Spawns the command; rejects with a `ShellToolError` when it cannot start. */
  static async start(spawner: ProcessSpawner, init: SessionStart): Promise<ProcessSession> {
    const session = new ProcessSession(init);
    // Non-pty stdin stays open only for `background:true`: a foreground `wc -l` must see EOF
    // rather than hang until its yield (OpenClaw closes it too); a backgrounded command is one
    // the caller means to talk to with `process write`.
    session.proc = await spawner.spawn({
      command: init.command,
      cwd: init.cwd,
      env: init.env,
      pty: init.pty,
      keepStdinOpen: init.pty || init.background,
      confined: init.confined,
      onOutput: (stream, text) => session.onOutput(stream, text),
    });
    init.emit({
      type: 'shell.started',
      data: {
        sessionId: init.id,
        scope: init.scope,
        command: init.command,
        cwd: init.cwd,
        pid: session.pid,
        pty: init.pty,
        startedAt: session.startedAt,
        backgrounded: init.background,
      },
    });
    if (init.timeoutSeconds > 0) {
      session.timeoutTimer = setTimeout(() => session.onTimeout(), init.timeoutSeconds * 1000);
    }
    void session.proc.exited.then((exit) => session.onExit(exit));
    return session;
  }

  get id(): string {
    return this.init.id;
  }
  get scope(): string {
    return this.init.scope;
  }
  get command(): string {
    return this.init.command;
  }
  get cwd(): string {
    return this.init.cwd;
  }
  get pty(): boolean {
    return this.init.pty;
  }
  get pid(): number {
    return this.proc.pid;
  }
  get timeoutSeconds(): number {
    return this.init.timeoutSeconds;
  }
  get exited(): boolean {
    return this.status !== 'running';
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
  get stdinWritable(): boolean {
    return !this.exited && this.proc.stdinWritable;
  }
  get durationMs(): number {
    return (this.endedAt ?? this.init.now()) - this.startedAt;
  }

  drainPending(): { output: string; dropped: boolean } {
    return this.buffer.drain();
  }

  write(data: string | Buffer): Promise<void> {
    return this.proc.write(data);
  }

  endStdin(): void {
    this.proc.endStdin();
  }

  /** SIGTERM to the whole tree, then SIGKILL if it is still there after the grace period. */
  terminate(): void {
    if (this.exited) return;
    this.proc.signal('SIGTERM');
    this.killTimer ??= setTimeout(() => this.proc.signal('SIGKILL'), KILL_GRACE_MS);
  }

  /**
   * Ends the whole sandbox at once with SIGKILL (no grace: a command past a workspace limit must
   * not write on), and makes its answers say `reason`.
   */
  stop(reason: string): void {
    if (this.exited || this.stoppedReason !== undefined) return;
    this.stoppedReason = reason;
    this.proc.signal('SIGKILL');
  }

  /** Signals stragglers of an exited session's group (a `cmd &` left behind), for shutdown. */
  signalGroup(signal: NodeJS.Signals): void {
    this.proc.signal(signal);
  }

  /** Resolves on new output or exit, or after `ms`, whichever comes first. */
  waitForActivity(ms: number): Promise<void> {
    if (this.exited || this.buffer.hasPending || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  private onOutput(stream: OutputStream, text: string): void {
    if (!text) return;
    this.lastOutputAt = this.init.now();
    this.buffer.append(stream, text);
    this.recorder.append(stream, text);
    // Full-screen programs announce DECCKM; arrow keys must then be sent in SS3 form.
    const app = text.lastIndexOf('\x1b[?1h');
    const normal = text.lastIndexOf('\x1b[?1l');
    if (app !== normal) this.cursorKeyMode = app > normal ? 'application' : 'normal';
    this.wake();
  }

  private onTimeout(): void {
    this.timedOut = true;
    this.terminate();
  }

  private onExit(exit: ProcessExit): void {
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.killTimer);
    this.endedAt = this.init.now();
    this.exitCode = exit.code;
    this.exitSignal = exit.signal;
    const failed =
      this.timedOut ||
      this.stoppedReason !== undefined ||
      exit.signal !== null ||
      (exit.code !== null && SHELL_FAILURE_CODES.has(exit.code));
    this.status = failed ? 'failed' : 'completed';
    this.recorder.flush();
    this.init.emit({
      type: 'shell.exited',
      data: {
        sessionId: this.id,
        scope: this.scope,
        status: this.status,
        exitCode: exit.code,
        exitSignal: exit.signal,
        timedOut: this.timedOut,
        startedAt: this.startedAt,
        endedAt: this.endedAt,
        durationMs: this.endedAt - this.startedAt,
        backgrounded: this.backgrounded && !this.removed,
        droppedChars: this.recorder.dropped,
        timeoutSeconds: this.timeoutSeconds,
        ...(this.stoppedReason !== undefined ? { stoppedReason: this.stoppedReason } : {}),
      },
      tail: this.tail,
    });
    this.wake();
    this.resolveDone();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { WORKSPACE_MOUNT, type ProcessInput, type ShellAnswer, type ShellConfig, type ShellExecInput } from '@codemode/contracts';
import { runProcessAction } from './actions';
import { failed } from './actions/action-context';
import {
  CannotDetachError,
  ElevatedExecError,
  EmptyCommandError,
  SessionDeletedError,
  ShellHostError,
  ShellSandboxUnavailableError,
  ShellShuttingDownError,
  ShellToolError,
} from './errors';
import { finishedAnswer, runningAnswer, yieldDelay } from './exec-answers';
import { texts } from './texts';
import { ProcessSession } from './process-session';
import { ProcessSpawner, type ConfinedSpawn, type ProcessSpawnerOptions } from './process-spawner';
import type { SandboxSetup } from './sandbox/bwrap-invocation';
import type { Confinement } from './sandbox/confinement';
import { prepareWorkspace } from './sandbox/workspace-owner';
import { WorkspaceUsage } from './sandbox/workspace-usage';
import { WorkspaceWatchdog } from './sandbox/workspace-watchdog';
import { groupAlive, signalGroup } from './process-tree';
import { createSessionId } from './session-ids';
import { SessionStore } from './session-store';
import { StartsUnderWay, type StartUnderWay } from './starts-under-way';
import type { SessionView } from './session-view';
import type { ShellEvent, ShellEventListener } from './shell-events';
import { resolveWorkdir, shownPath } from './workdir';

/** PATH for children when the caller passes no base environment. */
const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Environment of a confined command before the call's own `env` (SPEC §10): nothing of the worker's. */
const SANDBOX_ENV = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: WORKSPACE_MOUNT,
  SHELL: '/bin/bash',
  LANG: 'C.UTF-8',
};
/** SPEC §10: `timeoutSeconds` 0, or over the cap, means the cap. */
const DEFAULT_MAX_TIMEOUT_SECONDS = 3600;
/** How often finished sessions past their `cleanupMs` are dropped. */
const SWEEP_INTERVAL_MS = 30_000;
/** How long `shutdown()` waits for SIGTERM before the SIGKILL already scheduled lands. */
const SHUTDOWN_WAIT_MS = 5_000;

/** A shell-process scope: the session's `agentId`, or the Code Mode session itself. */
export type ShellScope = string;

export interface ProcessRegistryOptions {
  /** Resolved shell settings used when a call passes none of its own. */
  defaults: ShellConfig;
  /** Directory commands run in; `workdir` must stay inside it. Created when missing. @default process.cwd() */
  workspaceRoot?: string;
  /** Base environment of every command (the caller reads the worker's env). @default { PATH } */
  baseEnv?: Record<string, string>;
  now?: () => number;
  /** Receives `shell.started`, `shell.output` and `shell.exited` for the event log. */
  onEvent?: ShellEventListener;
  /** Name the texts give the process tool over REST. @default 'process' */
  processToolName?: string;
  /** Also refuse ids the caller knows are taken (e.g. recorded by other workers). */
  isIdTaken?: (id: string) => boolean;
  spawner?: ProcessSpawnerOptions;
  /** What confined commands share; required for calls whose confinement is `bwrap`. */
  sandbox?: SandboxSetup;
  /** `CODEMODE_SHELL_MAX_TIMEOUT_SECONDS`. @default 3600 */
  maxTimeoutSeconds?: number;
  /** `CODEMODE_WORKSPACE_MAX_BYTES`: past it, running commands are stopped and new ones refused. Unset: no limit. */
  workspaceMaxBytes?: number;
  /** `CODEMODE_WORKSPACE_MAX_FILES`: the same for files and folders. Unset: no limit. */
  workspaceMaxFiles?: number;
}

export interface ExecContext {
  /**
   * Set when the call comes from a cell: its remaining budget, the process tool's callable, and the
   * call's callKey (SPEC §16), which the command sees as CODEMODE_CALL_KEY.
   */
  insideCell?: { remainingBudgetMs: number; processCallable: string; callKey?: string };
  /** Workspace of this call's session, when it differs from the registry's. */
  workspaceRoot?: string;
  /** How the command runs (SPEC §10). @default { kind: 'none' } */
  confinement?: Confinement;
}

export interface ProcessContext {
  /** The process tool's callable inside a cell (`process_<hex>`), named in the input-wait hint. */
  processCallable?: string;
  /** Sessions of this scope rebuilt from the event log whose worker is gone (see `rebuildSessions`). */
  recorded?: readonly SessionView[];
}

/**
 * The shell processes of one worker: OpenClaw's `exec` and `process` tools. Processes live in
 * this worker's memory; the caller routes calls for a session to the worker that started it and
 * appends the reported events to the log.
 */
export class ProcessRegistry {
  private readonly store: SessionStore;
  private readonly spawner: ProcessSpawner;
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  /** Process groups of exited sessions that still had members (`cmd &`), ended at shutdown: pgid → workspace. */
  private readonly stragglers = new Map<number, string>();
  /** The workspace each running session was started in, so a removed workspace can end its processes. */
  private readonly workspaceOf = new Map<ProcessSession, string>();
  private readonly starting = new StartsUnderWay();
  private readonly usage: WorkspaceUsage | undefined;
  private readonly watchdog: WorkspaceWatchdog | undefined;
  private closing = false;

  constructor(private readonly opts: ProcessRegistryOptions) {
    this.now = opts.now ?? Date.now;
    const limited = opts.workspaceMaxBytes !== undefined || opts.workspaceMaxFiles !== undefined;
    this.usage = limited
      ? new WorkspaceUsage({ maxBytes: opts.workspaceMaxBytes ?? Infinity, maxFiles: opts.workspaceMaxFiles ?? Infinity })
      : undefined;
    this.watchdog = this.usage && new WorkspaceWatchdog(this.usage);
    this.store = new SessionStore(this.now);
    this.spawner = new ProcessSpawner(opts.spawner);
    this.sweeper = setInterval(() => this.store.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  /** The shell `exec` tool (SPEC §7). Every outcome, errors included, is an answer. */
  async exec(
    scope: ShellScope,
    input: ShellExecInput,
    config: ShellConfig = this.opts.defaults,
    ctx: ExecContext = {},
  ): Promise<ShellAnswer> {
    try {
      return await this.startCommand(scope, input, config, ctx);
    } catch (err) {
      if (err instanceof ShellToolError) return failed(err.message);
      throw err;
    }
  }

  /**
   * The `process` tool (SPEC §7). Every outcome, errors included, is an answer.
   * @throws ProcessInputError for a `timeout` that is neither a number nor an integer string.
   */
  async process(
    scope: ShellScope,
    input: ProcessInput,
    config: ShellConfig = this.opts.defaults,
    ctx: ProcessContext = {},
  ): Promise<ShellAnswer> {
    return runProcessAction({
      scope,
      input,
      store: this.store,
      recorded: ctx.recorded ?? [],
      now: this.now,
      inputWaitIdleMs: config.inputWaitIdleMs,
      tool: ctx.processCallable ?? this.opts.processToolName ?? 'process',
    });
  }

  /** Whether this worker holds the session (running or kept finished) in this scope. */
  knows(scope: ShellScope, id: string): boolean {
    return this.store.getRunning(scope, id) !== undefined || this.store.getFinished(scope, id) !== undefined;
  }

  /** Sessions held now: running processes (foreground ones included) and kept finished ones. */
  counts(): { running: number; finished: number } {
    return { running: this.store.allRunning().length, finished: this.store.allFinished().length };
  }

  /** Whether a process (or a straggler of an exited one) still runs, or is starting, in `workspace`. */
  runsIn(workspace: string): boolean {
    const target = path.resolve(workspace);
    if (this.starting.in(target)) return true;
    for (const [session, where] of this.workspaceOf) if (where === target && !session.exited) return true;
    for (const [pgid, where] of this.stragglers) if (where === target && groupAlive(pgid)) return true;
    return false;
  }

  /**
   * Ends every process running in `workspace` (its session is being removed) the way `kill` does,
   * SIGTERM then SIGKILL, and waits for their exits, at most the grace `shutdown` gives.
   */
  async endIn(workspace: string): Promise<void> {
    const target = path.resolve(workspace);
    // Taken first: a session made again there while the starts below settle is not this one's.
    const running = [...this.workspaceOf].filter(([, where]) => where === target).map(([session]) => session);
    // Starts under way there go no further, or stop what they started, before the caller removes the folder.
    await this.starting.endIn(target);
    await endSessions(running);
    for (const [pgid, where] of this.stragglers) {
      if (where !== target) continue;
      if (groupAlive(pgid)) signalGroup(pgid, 'SIGKILL');
      this.stragglers.delete(pgid);
    }
  }

  /** Ends every process group this worker started (SIGTERM, then SIGKILL) and records their exits. */
  async shutdown(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    // Starts under way see `closing`: they go no further, or stop what they started.
    await this.starting.settled();
    await endSessions(this.store.allRunning());
    for (const pgid of this.stragglers.keys()) if (groupAlive(pgid)) signalGroup(pgid, 'SIGKILL');
    this.stragglers.clear();
    await this.usage?.close();
  }

  private async startCommand(scope: ShellScope, input: ShellExecInput, config: ShellConfig, ctx: ExecContext): Promise<ShellAnswer> {
    if (this.closing) throw new ShellShuttingDownError();
    if (!input.command.trim()) throw new EmptyCommandError();
    if (input.awaitResults && input.background) throw new CannotDetachError();
    if (input.elevated === true) throw new ElevatedExecError();
    checkHost(input);
    const confinement = ctx.confinement ?? { kind: 'none' };
    if (confinement.kind === 'unavailable') throw new ShellSandboxUnavailableError(confinement.reason);
    const workspace = path.resolve(ctx.workspaceRoot ?? this.opts.workspaceRoot ?? process.cwd());
    // A plain `rm` is how the caller follows "remove files first": it is neither refused nor stopped.
    const removal = isPlainRemoval(input.command);
    const timeoutSeconds = timeoutOf(
      input.timeoutSeconds,
      config.timeoutSeconds,
      this.opts.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS,
    );
    const session = await this.starting.begin(workspace, async (start) => {
      const started = await this.launch(scope, input, config, ctx, { confinement, removal, timeoutSeconds, start });
      this.store.addRunning(started);
      this.workspaceOf.set(started, workspace);
      void started.done.then(() => this.noteStragglers(started, workspace));
      if (start.ended || this.closing) {
        // Its session was deleted, or this worker began to shut down, while it started. Not
        // backgrounded: its exit is this answer's, not a background session's to notify.
        started.backgrounded = false;
        started.stop(start.ended ? texts.sessionDeletedWhileStarting : texts.shuttingDown);
        await started.done;
        return started;
      }
      if (!removal) this.watchdog?.watch(workspace, started);
      if (this.usage) void started.done.then(() => this.usage?.measure(workspace));
      return started;
    });
    const tool = ctx.insideCell?.processCallable ?? this.opts.processToolName ?? 'process';
    if (session.backgrounded) return runningAnswer(session, tool);
    // awaitResults: the caller wants the result itself, so the command is never detached.
    const waitMs = input.awaitResults ? undefined : yieldDelay(input.yieldMs, config.backgroundMs, ctx.insideCell?.remainingBudgetMs);
    await raceTimeout(session.done, waitMs);
    if (session.exited) return finishedAnswer(session, timeoutSeconds);
    session.backgrounded = true;
    return runningAnswer(session, tool);
  }

  /**
   * What a start awaits: the workspace's size, the cwd, the workspace's owner, the spawn. A start
   * whose workspace was ended, or whose worker began to shut down, meanwhile goes no further.
   */
  private async launch(
    scope: ShellScope,
    input: ShellExecInput,
    config: ShellConfig,
    ctx: ExecContext,
    plan: LaunchPlan,
  ): Promise<ProcessSession> {
    const { confinement, start, timeoutSeconds } = plan;
    const goOn = () => {
      if (this.closing) throw new ShellShuttingDownError();
      if (start.ended) throw new SessionDeletedError();
    };
    if (this.usage && !plan.removal) {
      const overrun = await this.usage.overrun(start.workspace);
      if (overrun) throw this.usage.refusal(overrun);
      goOn();
    }
    // From here on it may make the workspace folder: an end waits for it.
    start.pastChecks = true;
    const confined = confinement.kind === 'bwrap';
    const cwd = await this.workdir(start.workspace, input.workdir, confined);
    goOn();
    const spawnConfined: ConfinedSpawn | undefined = confined
      ? { setup: this.sandboxSetup(), identity: confinement.identity, workspace: start.workspace, cpuSeconds: timeoutSeconds }
      : undefined;
    if (spawnConfined) {
      await prepareWorkspace(start.workspace, spawnConfined.identity);
      goOn();
    }
    const baseEnv = confined
      ? { ...SANDBOX_ENV, TERM: input.pty ? 'xterm-256color' : 'dumb' }
      : (this.opts.baseEnv ?? { PATH: FALLBACK_PATH });
    return ProcessSession.start(this.spawner, {
      id: createSessionId((id) => this.store.isTaken(id) || (this.opts.isIdTaken?.(id) ?? false)),
      scope,
      command: input.command,
      cwd,
      confined: spawnConfined,
      // OPENCLAW_SHELL and CODEMODE_CALL_KEY last: commands can rely on them whatever the request's env says.
      env: { ...baseEnv, ...input.env, OPENCLAW_SHELL: 'exec', ...callKeyEnv(ctx.insideCell?.callKey) },
      pty: input.pty === true,
      background: input.background === true,
      timeoutSeconds,
      config,
      now: this.now,
      emit: (event) => this.emit(event),
    });
  }

  /** The command's cwd as it runs and as answers show it: the host path, or the path inside the sandbox. */
  private async workdir(workspace: string, workdir: string | undefined, confined: boolean): Promise<string> {
    if (!confined) return resolveWorkdir(workspace, workdir);
    const real = await resolveWorkdir(workspace, workdir, WORKSPACE_MOUNT);
    return shownPath(await realpath(workspace), real, WORKSPACE_MOUNT);
  }

  private sandboxSetup(): SandboxSetup {
    if (!this.opts.sandbox) throw new ShellSandboxUnavailableError('this worker was started without a sandbox setup');
    return this.opts.sandbox;
  }

  private noteStragglers(session: ProcessSession, workspace: string): void {
    this.workspaceOf.delete(session);
    if (groupAlive(session.pid)) this.stragglers.set(session.pid, workspace);
  }

  private emit(event: ShellEvent): void {
    try {
      this.opts.onEvent?.(event);
    } catch {
      // A failing listener must not break the command; the caller owns its own error reporting.
    }
  }
}

/** What `startCommand` decided before the start's awaits. */
interface LaunchPlan {
  confinement: Exclude<Confinement, { kind: 'unavailable' }>;
  removal: boolean;
  timeoutSeconds: number;
  start: StartUnderWay;
}

/** `timeoutSeconds` of the call, else the session's; junk falls back; 0 or more than the cap is the cap. */
function timeoutOf(requested: number | undefined, fallback: number, cap: number): number {
  const chosen = requested === undefined || !Number.isFinite(requested) || requested < 0 ? fallback : requested;
  return chosen === 0 || chosen > cap ? cap : chosen;
}

/**
 * A bare `rm …` (no shell operators, redirections or substitutions) still runs while the workspace
 * is over its size limit: it is how the caller follows "remove files first".
 */
function isPlainRemoval(command: string): boolean {
  return /^\s*rm(\s+[^;&|`$<>()\n]*)?$/.test(command);
}

function raceTimeout(done: Promise<void>, ms: number | undefined): Promise<void> {
  if (ms === undefined) return done;
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

/** Ends `sessions` as `kill` does: SIGTERM, then SIGKILL for those not exited within the shutdown grace. */
async function endSessions(sessions: readonly ProcessSession[]): Promise<void> {
  for (const session of sessions) session.terminate();
  await raceTimeout(
    Promise.all(sessions.map((s) => s.done)).then(() => undefined),
    SHUTDOWN_WAIT_MS,
  );
  for (const session of sessions) if (!session.exited) session.signalGroup('SIGKILL');
}

/**
 * SPEC §7 `host`: `auto` (the default), `sandbox` and `gateway` run the command here; `node` runs
 * it on the paired node `node` names, which the worker's ShellHost sends to the node before this
 * registry is asked: a registry without nodes knows none.
 */
function checkHost(input: ShellExecInput): void {
  const host = input.host ?? 'auto';
  if (host === 'auto' || host === 'sandbox' || host === 'gateway') return;
  if (host !== 'node') throw new ShellHostError(texts.unknownHost(host));
  throw new ShellHostError(texts.unknownNode(input.node ?? ''));
}

/** SPEC §16: a command run from a cell gets its call's callKey in its environment. */
function callKeyEnv(callKey: string | undefined): Record<string, string> {
  return callKey === undefined ? {} : { CODEMODE_CALL_KEY: callKey };
}

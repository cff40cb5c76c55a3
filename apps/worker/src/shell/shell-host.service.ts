import { NodeSurface } from '../nodes/node-surface';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ProcessInput, SessionRef, ShellAnswer, ShellConfig, ShellExecInput, ShellJob } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { EventLog, publishAnswer, type AppendInput } from '@codemode/events';
import { WorkerPresence, type LeasedSlot } from '@codemode/fleet';
import {
  ProcessRegistry,
  rebuildSessions,
  removeSessionWorkspace,
  sessionWorkspace,
  SHELL_TEXTS,
  yieldDelay,
  type ShellEvent,
} from '@codemode/shell';
import type { Logger } from '@codemode/telemetry';
import type { RedisClient } from '@codemode/events';
import { APP_CONFIG, LOGGER, REDIS } from '../core/tokens';
import { WorkerTenantLimits } from '../quotas/worker-tenant-limits.service';
import { ShellConfinement } from './shell-confinement.service';
import { ShellExitNotifier } from './shell-exit-notifier.service';

/** How long `wait` recognizes a shell session id passed to it by mistake. */
const SHELL_ID_MEMORY_SECONDS = 24 * 3600;
/** How long the events of a deleted session's last processes are still dropped after they were ended. */
const DELETED_SESSION_MEMORY_MS = 60_000;

/** Where a shell call comes from: its session, its scope, and whether a cell made it. */
export interface ShellCaller {
  ref: SessionRef;
  scopeKey: string;
  /** Set for calls from a cell: its remaining budget, the process tool's callable name and the call's callKey (SPEC §16). */
  insideCell?: { remainingBudgetMs: number; processCallable: string; callKey?: string };
}

/**
 * This worker's shell processes (SPEC §7): runs `exec`/`process` for the scopes it serves,
 * appends their `shell.*` events to the log of the session that started them, and ends them on
 * shutdown.
 */
@Injectable()
export class ShellHost implements OnApplicationShutdown {
  private readonly registry: ProcessRegistry;
  /** The session a shell call runs for, carried into the child's stream callbacks. */
  private readonly caller = new AsyncLocalStorage<SessionRef>();
  private readonly refByShellId = new Map<string, SessionRef>();
  /** Quota slots of running shell sessions, given back when each exits (SPEC §10). */
  private readonly slotByShellId = new Map<string, LeasedSlot>();
  /** Sessions that exited before their exec answered (a background `true`): their slot is given back at once. */
  private readonly exitedEarly = new Set<string>();
  /**
   * Workspaces of deleted Code Mode sessions, with their deletion's number (`deletions`): their
   * processes' last events are not logged, since an append would create the session again (SPEC
   * §10: DELETE removes everything of it), and an exec asked before the deletion does not start there.
   */
  private readonly deleted = new Map<string, number>();
  /** Deletions seen so far: an exec notes the count when asked, a deletion takes the next number. */
  private deletions = 0;
  /** Removals of deleted sessions' workspaces under way: a start there waits for its folder to be gone first. */
  private readonly removing = new Map<string, Promise<void>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly events: EventLog,
    private readonly presence: WorkerPresence,
    private readonly confinement: ShellConfinement,
    private readonly limits: WorkerTenantLimits,
    private readonly nodes: NodeSurface,
    private readonly notifier: ShellExitNotifier,
  ) {
    this.registry = new ProcessRegistry({
      defaults: config.shellDefaults,
      workspaceRoot: config.workspaceRoot,
      baseEnv: { ...config.shellBaseEnv },
      onEvent: (event) => this.record(event),
      sandbox: confinement.setup,
      maxTimeoutSeconds: config.shellSandbox.maxTimeoutSeconds,
      workspaceMaxBytes: config.shellSandbox.workspaceMaxBytes,
      workspaceMaxFiles: config.shellSandbox.workspaceMaxFiles,
    });
  }

  /** A shell request routed to this worker over REST; the answer is pushed to the API. */
  async handle(job: ShellJob): Promise<void> {
    const caller: ShellCaller = { ref: { tenant: job.tenant, sessionId: job.sessionId }, scopeKey: job.scopeKey };
    let answer: ShellAnswer;
    try {
      answer =
        job.kind === 'exec'
          ? await this.exec(caller, job.input as ShellExecInput, job.config)
          : await this.process(caller, job.input as ProcessInput, job.config);
    } catch (error) {
      // Every outcome is an answer (SPEC §7): the caller must never be left waiting.
      this.logger.warn({ tenant: job.tenant, sessionId: job.sessionId, err: error }, 'shell request failed');
      answer = { text: `Shell request failed: ${error instanceof Error ? error.message : String(error)}`, details: { status: 'failed' } };
    }
    await publishAnswer(this.redis, job.replyTo, job.requestId, answer);
  }

  async exec(caller: ShellCaller, input: ShellExecInput, config: ShellConfig): Promise<ShellAnswer> {
    if (input.host === 'node' && input.elevated !== true) return this.onNode(caller, input, config);
    const asked = this.deletions;
    await this.presence.claimShellHome(caller.ref.tenant, caller.scopeKey, this.config.workerId);
    const workspaceRoot = this.workspaceOf(caller.ref);
    const confinement = await this.confinement.forTenant(caller.ref.tenant);
    const slot = await this.limits.shellSession(caller.ref.tenant);
    if (!slot) return { text: SHELL_TEXTS.shellQuota, details: { status: 'failed' } };
    for (let removal = this.removing.get(workspaceRoot); removal; removal = this.removing.get(workspaceRoot))
      await removal.catch(() => undefined);
    // Deleted while this call waited above: the registry's own check covers only what follows.
    if ((this.deleted.get(workspaceRoot) ?? 0) > asked) {
      await slot.release();
      return { text: SHELL_TEXTS.sessionDeletedBeforeRun, details: { status: 'failed' } };
    }
    let answer: ShellAnswer;
    try {
      answer = await this.caller.run(caller.ref, () =>
        this.registry.exec(this.scope(caller), input, config, { workspaceRoot, insideCell: caller.insideCell, confinement }),
      );
    } catch (error) {
      await slot.release();
      throw error;
    }
    this.holdWhileRunning(answer, slot);
    return answer;
  }

  /**
   * SPEC §7 `host: "node"`: `system.run` on the paired node, in the foreground within the call's
   * timeout: inside a cell what is left of its budget, over REST the yield window (a command
   * still running then is one that would have gone to the background).
   */
  private onNode(caller: ShellCaller, input: ShellExecInput, config: ShellConfig): Promise<ShellAnswer> {
    const timeoutMs = caller.insideCell ? Math.max(1, caller.insideCell.remainingBudgetMs) : yieldDelay(input.yieldMs, config.backgroundMs);
    return this.nodes.shell(caller.ref.tenant, input, { timeoutMs, signal: AbortSignal.timeout(timeoutMs + 5000) });
  }

  /** A session still running keeps its slot until it exits; any other answer gives it back now. */
  private holdWhileRunning(answer: ShellAnswer, slot: LeasedSlot): void {
    const id = answer.details.status === 'running' ? answer.details.sessionId : undefined;
    if (id === undefined || this.exitedEarly.delete(id)) {
      void slot.release().catch(() => undefined);
      return;
    }
    this.slotByShellId.set(id, slot);
  }

  async process(caller: ShellCaller, input: ProcessInput, config: ShellConfig): Promise<ShellAnswer> {
    await this.presence.claimShellHome(caller.ref.tenant, caller.scopeKey, this.config.workerId);
    const scope = this.scope(caller);
    // Sessions this worker does not hold (their worker died or handed the scope over) are
    // answered from the log: finished ones stay readable, running ones show as lost.
    const needsHistory = input.action === 'list' || (typeof input.sessionId === 'string' && !this.registry.knows(scope, input.sessionId));
    const recorded = needsHistory ? await this.recorded(caller.ref, scope, config) : [];
    const answer = await this.registry.process(scope, input, config, { recorded, processCallable: caller.insideCell?.processCallable });
    if (
      (input.action === 'clear' || input.action === 'remove') &&
      typeof input.sessionId === 'string' &&
      answer.details.status !== 'failed'
    ) {
      await this.events.append(caller.ref, { type: 'shell.removed', data: { sessionId: input.sessionId, scope } });
    }
    return answer;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.registry.shutdown();
    // After the processes ended: their exits may be due notifications (SPEC §7).
    await this.notifier.stop();
  }

  /** Shell sessions this worker holds, for the `codemode_shell_sessions` gauge. */
  counts(): { running: number; finished: number } {
    return this.registry.counts();
  }

  /** The session's workspace on this worker's disk (`sessionWorkspace`, the one derivation). */
  workspaceOf(ref: SessionRef): string {
    return sessionWorkspace(this.config.workspaceRoot, ref);
  }

  /** Whether a shell process of this worker still runs in the workspace (the janitor keeps it). */
  runsIn(workspace: string): boolean {
    return this.registry.runsIn(workspace);
  }

  /** A deleted session (SPEC §10): its shell processes on this worker end, then its workspace goes. */
  async removeWorkspace(ref: SessionRef): Promise<void> {
    const workspace = this.workspaceOf(ref);
    const at = ++this.deletions;
    this.deleted.set(workspace, at);
    const removal = this.registry
      .endIn(workspace)
      .then(() => removeSessionWorkspace(this.config.workspaceRoot, ref))
      .finally(() => {
        if (this.removing.get(workspace) === removal) this.removing.delete(workspace);
        // Remembered from the removal's end, and a later deletion of the same session keeps its own entry.
        setTimeout(() => this.deleted.get(workspace) === at && this.deleted.delete(workspace), DELETED_SESSION_MEMORY_MS).unref();
      });
    this.removing.set(workspace, removal);
    await removal;
  }

  private scope(caller: ShellCaller): string {
    return `${caller.ref.tenant}/${caller.scopeKey}`;
  }

  private async recorded(ref: SessionRef, scope: string, config: ShellConfig) {
    const events = await this.events.history(ref);
    const shellEvents = events.filter((e) => e.type.startsWith('shell.') && (e.data as { scope?: unknown }).scope === scope);
    return rebuildSessions(shellEvents, {
      isOwnerAlive: (id) => this.registry.knows(scope, id),
      maxOutputChars: config.maxOutputChars,
      now: Date.now(),
      cleanupMs: config.cleanupMs,
    });
  }

  private record(event: ShellEvent): void {
    const id = event.data.sessionId;
    const ref = this.caller.getStore() ?? this.refByShellId.get(id);
    if (!ref) return;
    if (event.type === 'shell.started') {
      this.refByShellId.set(id, ref);
      this.presence.rememberShellSession(ref.tenant, id, SHELL_ID_MEMORY_SECONDS).catch(() => undefined);
    }
    if (event.type === 'shell.exited') {
      this.refByShellId.delete(id);
      const slot = this.slotByShellId.get(id);
      if (slot) {
        this.slotByShellId.delete(id);
        void slot.release().catch(() => undefined);
      } else if (event.data.backgrounded) {
        this.exitedEarly.add(id);
      }
    }
    if (this.deleted.has(this.workspaceOf(ref))) return;
    // Only its type and data are logged (an exit's `tail` is for the notification).
    this.append(ref, event);
    if (event.type === 'shell.exited') {
      this.notifier.exited(ref, event.data, event.tail, (data) => {
        if (!this.deleted.has(this.workspaceOf(ref))) this.append(ref, { type: 'shell.notified', data });
      });
    }
  }

  private append(ref: SessionRef, event: AppendInput): void {
    this.events.append(ref, event).catch((error: unknown) => {
      const shellSessionId = (event.data as { sessionId?: unknown }).sessionId;
      this.logger.warn({ tenant: ref.tenant, sessionId: ref.sessionId, shellSessionId, err: error }, 'could not record a shell event');
    });
  }
}

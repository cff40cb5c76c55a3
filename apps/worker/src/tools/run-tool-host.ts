import {
  shellScopeKey,
  toolSettledData,
  type GuestCatalog,
  type Limits,
  type Policy,
  type SessionRef,
  type ShellConfig,
} from '@codemode/contracts';
import {
  apiList,
  apiRead,
  describe,
  findByCallableName,
  handleMetadata,
  mapMcpArguments,
  withPlatformApiFiles,
  type CatalogEntry,
} from '@codemode/catalog';
import {
  isStoreUnavailable,
  RUN_HISTORY_LIMIT_MESSAGE,
  RunHistoryLimitError,
  SameTickAppends,
  storeStopMessage,
  toStoreError,
  type ApprovalLedger,
  type EventLog,
  type StoredApproval,
} from '@codemode/events';
import type { BridgeHost, CallGate, ExternalSettlement } from '@codemode/sandbox';
import type { BridgeCall } from '@codemode/cells';
import { ResultUnavailableError, StoreBuffer, type ResultsStore, type SessionStore } from '@codemode/store';
import {
  callWebhookTool,
  isWorkspaceToolName,
  runCoreTool,
  SHARED_SLICES,
  type McpServers,
  type SessionToolCatalog,
  type WebhookAddressPolicy,
} from '@codemode/tools';
import type { WorkerMetrics } from '@codemode/telemetry';
import type { ShellHost } from '../shell/shell-host.service';
import { CallPolicy } from './call-policy';
import type { SurfaceHandler } from './platform-surfaces';
import { CANCELED_MESSAGE, ToolCallError } from './tool-call-error';

/** Everything a run's tool calls need from the worker. */
export interface ToolDeps {
  events: EventLog;
  shell: ShellHost;
  mcp: McpServers | null;
  results: ResultsStore;
  sessionStore: SessionStore;
  webhookSecret: string | undefined;
  /** The address rules a webhook call's endpoint is checked against when it is dialed (SPEC §10). */
  webhookPolicy: () => WebhookAddressPolicy;
  metrics: WorkerMetrics;
  /** The run's history reached its cap (SPEC §6): stop its cell now. */
  stopRun: (runId: string) => void;
  approvals: ApprovalLedger;
  /** CODEMODE_APPROVAL_TIMEOUT_SECONDS in ms (SPEC §11). */
  approvalTimeoutMs: number;
  /** A call of this run now waits for an approval (the optional approval webhook). */
  approvalRequested: (ref: SessionRef, approval: StoredApproval) => void;
  /** The session's policy as it stands now (tenant's and session's merged), read again at each resumed leg. */
  readPolicy: () => Promise<Policy>;
  /** SPEC §15: the handler of each platform surface, by its dotted name (`surfaceHandlers`). */
  surfaces: ReadonlyMap<string, SurfaceHandler>;
}

/** A parked run's tool host as its image keeps it (SPEC §12). */
export interface ParkedHostState {
  counts: { searchCount: number; describeCount: number; callCount: number };
  storeWrites: [string, string | null][];
}

export interface ToolRun {
  ref: SessionRef;
  runId: string;
  epoch: number;
  limits: Limits;
  shell: ShellConfig;
  agentId: string | null;
  awaitResults: boolean;
  /** SPEC §15: the session has `agents: true`, so the run has `agents.run`. */
  agents: boolean;
  /** Replay-safe run (SPEC §6): inputs and outcomes of its tool calls are kept in the log for replay. */
  restartSafe: boolean;
}

/**
 * The host side of one run's bridge (SPEC §4–§5): dispatches every guest request to the tool it
 * names, records each tool call and its settlement in the log before the guest sees the result,
 * and keeps the run's buffered store writes and telemetry counters. It lives as long as the run,
 * across waits.
 */
export class RunToolHost implements BridgeHost {
  private readonly counts = { searchCount: 0, describeCount: 0, callCount: 0 };
  /** Created once, on the first store/load: concurrent first calls share it. */
  private store: Promise<StoreBuffer> | undefined;
  private storeSnapshot: StoreBuffer | undefined;
  private legDeadline = 0;
  private historyLimitReached = false;
  private storeFailed: unknown;
  private replayedListener: (() => void) | undefined;
  /** The run's tool policy (SPEC §11), checked before every tool call is dispatched. */
  private readonly policy: CallPolicy;
  private legsBegun = 0;
  /** The run's events: calls that start or settle together are written with one script call. */
  private readonly appends: SameTickAppends;
  /**
   * SPEC §15: `agents.run` calls of an awaitResults run, in flight until the platform answers
   * (`settlePlatform`, from POST …/tool-results through this worker's held-run jobs), by call id.
   */
  private readonly awaited = new Map<string, (outcome: ExternalSettlement) => void>();

  constructor(
    readonly run: ToolRun,
    readonly catalog: SessionToolCatalog,
    private readonly deps: ToolDeps,
    policy: Policy,
  ) {
    this.appends = new SameTickAppends(deps.events, run.ref);
    this.policy = new CallPolicy(policy, run, {
      approvals: deps.approvals,
      metrics: deps.metrics,
      approvalTimeoutMs: deps.approvalTimeoutMs,
      requested: (approval) => deps.approvalRequested(run.ref, approval),
      endpointOf: (entry) => (entry.source === 'client' ? catalog.clientTools.get(entry.toolName)?.endpoint : undefined),
      append: (type, data) => this.logged({ type, runId: run.runId, epoch: run.epoch, data }),
    });
  }

  /**
   * A run() or resume() leg starts: shell calls inside it yield within what is left of it. A
   * resumed leg reads the policy again, so an operator's change reaches a run that keeps parking
   * and resuming on this worker (the first leg's policy was read when this host was made).
   */
  beginLeg(timeoutMs: number): void {
    this.legDeadline = Date.now() + timeoutMs;
    if (this.legsBegun > 0) this.policy.reload(this.deps.readPolicy);
    this.legsBegun += 1;
  }

  /** Called once the sandbox rebuilt the run from its log and its live leg starts. */
  whenReplayed(listener: () => void): void {
    this.replayedListener = listener;
  }

  replayed(): void {
    this.replayedListener?.();
  }

  /** A write of this run was refused at the history cap: the run fails with it, whatever the cell did. */
  get historyFull(): boolean {
    return this.historyLimitReached;
  }

  /** A host call met a Redis failure and stopped the run: what it fails with (runtime_unavailable), else null. */
  get storeFailure(): string | null {
    return this.storeFailed === undefined ? null : storeStopMessage(toStoreError(this.storeFailed));
  }

  telemetry() {
    return this.catalog.telemetry(this.counts);
  }

  /** The run's guest catalog: its session's tools and the platform surfaces the run has (SPEC §15). */
  guestCatalog(): GuestCatalog {
    return this.catalog.guestCatalog(this.run);
  }

  guestCatalogJson(): string {
    return this.catalog.guestCatalogJson(this.run);
  }

  guestCatalogHash(): string {
    return this.catalog.guestCatalogHash(this.run);
  }

  /** The run's buffered store writes, committed when the cell completes. */
  storeWrites(): Map<string, string | null> {
    return this.storeSnapshot?.writes() ?? new Map<string, string | null>();
  }

  /** SPEC §12: what a parked run's image keeps of this host (its counters and buffered store writes). */
  parkedState(): ParkedHostState {
    return { counts: { ...this.counts }, storeWrites: [...this.storeWrites()] };
  }

  /** SPEC §12: goes on from a parked run's image; its buffered writes overlay the store as committed now. */
  adoptParkedState(state: ParkedHostState): void {
    Object.assign(this.counts, state.counts);
    if (state.storeWrites.length === 0) return;
    this.store = this.deps.sessionStore.snapshot(this.run.ref).then((committed) => {
      const buffer = new StoreBuffer(committed);
      for (const [key, json] of state.storeWrites) buffer.set(key, json === null ? undefined : (JSON.parse(json) as unknown));
      this.storeSnapshot = buffer;
      return buffer;
    });
  }

  answeredByPlatform(call: BridgeCall): boolean {
    if (call.method !== 'callValue') return false;
    const entry = this.catalog.byCallableName(argsOf(call).tool, this.run);
    // A call the policy does not simply allow is dispatched to us first, to be blocked or approved.
    return entry !== undefined && this.isPlatformTool(entry) && this.policy.decisionFor(entry) === 'allow';
  }

  /**
   * A host call that met a Redis failure (full, or not answering) stops the run: it could not be
   * recorded, so the run fails `runtime_unavailable` with the store's text (`storeFailure`),
   * never with a class name the guest would see as an internal error.
   */
  async dispatch(call: BridgeCall, signal: AbortSignal, gate?: CallGate): Promise<unknown> {
    try {
      return await this.dispatchCall(call, signal, gate);
    } catch (error) {
      if (signal.aborted || !isStoreUnavailable(error)) throw error;
      this.storeFailed ??= error;
      this.deps.stopRun(this.run.runId);
      throw new ToolCallError(storeStopMessage(toStoreError(error)));
    }
  }

  private async dispatchCall(call: BridgeCall, signal: AbortSignal, gate?: CallGate): Promise<unknown> {
    const args = argsOf(call);
    switch (call.method) {
      case 'callValue':
        return this.callValue(call, args, signal, gate);
      case 'namespace':
        return this.callNamespace(call, args, signal, gate);
      case 'search':
        this.counts.searchCount += 1;
        return (
          await this.catalog.search(
            args.query,
            {
              limit: typeof args.limit === 'number' ? args.limit : undefined,
              defaultLimit: this.run.limits.searchDefaultLimit,
              maxLimit: this.run.limits.maxSearchLimit,
            },
            SHARED_SLICES,
          )
        ).map(handleMetadata);
      case 'describe':
        this.counts.describeCount += 1;
        return describe(this.requireHandle(args.tool));
      case 'api': {
        const files = withPlatformApiFiles(await this.catalog.apiFiles(SHARED_SLICES), this.run);
        return args.op === 'read' ? apiRead(files, args.path) : apiList(files, args.prefix);
      }
      case 'resultSave':
        return this.deps.results.save(this.run.ref, JSON.stringify(args.value ?? null), this.run.limits);
      case 'resultLoad':
        return JSON.parse(await this.deps.results.load(this.run.ref, args.id)) as unknown;
      case 'resultDelete':
        // SPEC §4: a missing or expired id rejects.
        if (!(await this.deps.results.delete(this.run.ref, args.id))) throw new ResultUnavailableError();
        return true;
      case 'store':
        (await this.storeBuffer()).set(args.key, args.delete === true ? undefined : args.value);
        return null;
      case 'load':
        return (await this.storeBuffer()).get(args.key);
      default:
        throw new ToolCallError(`code mode bridge method ${call.method} is not available here.`);
    }
  }

  private async callValue(call: BridgeCall, args: Record<string, unknown>, signal: AbortSignal, gate?: CallGate): Promise<unknown> {
    const entry = this.requireTool(args.tool);
    this.counts.callCount += 1;
    const input = args.input ?? {};
    const platform = this.isPlatformTool(entry);
    if (!platform || this.policy.decisionFor(entry) !== 'allow') {
      await this.policy.admit(call, entry, input, signal, gate);
      // Approved: from here on only the platform answers it, as if it had been allowed.
      if (platform) gate?.handToPlatform();
    }
    if (platform) {
      // Settled later by the platform (POST …/tool-results → tool.settled there), not by us.
      await this.appendCalled(call, entry, input, true);
      return new Promise((_, reject) =>
        signal.addEventListener('abort', () => reject(new ToolCallError(CANCELED_MESSAGE)), { once: true }),
      );
    }
    if (this.isAwaitedPlatformCall(entry)) {
      // Recorded as the platform's (the platform learns of it from `tool.called`); settled by its
      // answer, which may come as soon as the event is written: it waits for it from before.
      const answered = this.awaitPlatform(call.id, signal);
      try {
        await this.appendCalled(call, entry, input, true);
      } catch (error) {
        this.awaited.delete(call.id);
        answered.catch(() => undefined);
        throw error;
      }
      return answered;
    }
    if (entry.source === 'client') return this.recorded(call, entry, input, signal, () => this.callClient(call, entry, input, signal));
    if (entry.source === 'platform') return this.recorded(call, entry, input, signal, () => this.callSurface(entry, input, signal));
    return this.recorded(call, entry, input, signal, () => this.callCore(call, entry, input));
  }

  /**
   * In a run that parks, the calls only the platform answers: a client tool without endpoint, and
   * `agents.run` (SPEC §15).
   */
  private isPlatformTool(entry: CatalogEntry): boolean {
    if (this.run.awaitResults) return false;
    if (entry.source === 'platform') return entry.toolName === 'agents.run';
    return entry.source === 'client' && !this.catalog.clientTools.get(entry.toolName)?.endpoint;
  }

  /**
   * SPEC §15: `agents.run` in an awaitResults run stays in flight until the platform answers it
   * (the run never parks; the cell waits up to snapshotTtlSeconds, as for any host work).
   */
  private isAwaitedPlatformCall(entry: CatalogEntry): boolean {
    return this.run.awaitResults && entry.source === 'platform' && entry.toolName === 'agents.run';
  }

  private awaitPlatform(callId: string, signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const cancel = (): void => {
        this.awaited.delete(callId);
        reject(new ToolCallError(CANCELED_MESSAGE));
      };
      signal.addEventListener('abort', cancel, { once: true });
      this.awaited.set(callId, (outcome) => {
        this.awaited.delete(callId);
        signal.removeEventListener('abort', cancel);
        if (outcome.ok) resolve(outcome.value);
        else reject(Object.assign(new Error(outcome.error.message), { name: outcome.error.name ?? 'Error' }));
      });
    });
  }

  /** `id` is a call of this running run that waits in flight for the platform's answer (`settlePlatform`). */
  awaitsPlatform(id: string): boolean {
    return this.awaited.has(id);
  }

  /** The platform's answer to such a call (already recorded as its `tool.settled`); false when it waits for none. */
  settlePlatform(id: string, outcome: ExternalSettlement): boolean {
    const settle = this.awaited.get(id);
    settle?.(outcome);
    return settle !== undefined;
  }

  /** SPEC §15: a platform surface's call, answered by its handler. */
  private callSurface(entry: CatalogEntry, input: unknown, signal: AbortSignal): Promise<unknown> {
    const handler = this.deps.surfaces.get(entry.toolName);
    if (!handler) throw new ToolCallError(`tool ${entry.callableName} has no implementation on this worker.`);
    return handler({ ref: this.run.ref, input, signal, budgetMs: this.legDeadline - Date.now() });
  }

  private async callCore(call: BridgeCall, entry: CatalogEntry, input: unknown): Promise<unknown> {
    if (isWorkspaceToolName(entry.toolName)) {
      return runCoreTool(entry.toolName, input, { workspaceRoot: this.deps.shell.workspaceOf(this.run.ref) });
    }
    const caller = {
      ref: this.run.ref,
      scopeKey: shellScopeKey(this.run.ref.sessionId, this.run.agentId),
      insideCell: {
        remainingBudgetMs: Math.max(0, this.legDeadline - Date.now()),
        processCallable: this.catalog.coreCallable('process'),
        callKey: this.callKey(call),
      },
    };
    if (entry.toolName === 'exec') return this.deps.shell.exec(caller, input as never, this.run.shell);
    if (entry.toolName === 'process') return this.deps.shell.process(caller, input as never, this.run.shell);
    throw new ToolCallError(`tool ${entry.callableName} has no implementation on this worker.`);
  }

  private async callClient(call: BridgeCall, entry: CatalogEntry, input: unknown, signal: AbortSignal): Promise<unknown> {
    const tool = this.catalog.clientTools.get(entry.toolName);
    if (tool?.endpoint) {
      return callWebhookTool({
        toolName: entry.toolName,
        endpoint: tool.endpoint,
        addressPolicy: this.deps.webhookPolicy(),
        secret: this.deps.webhookSecret,
        timeoutMs: tool.timeoutMs,
        body: { input, callId: call.id, runId: this.run.runId, sessionId: this.run.ref.sessionId },
        idempotencyKey: this.callKey(call),
        signal,
      });
    }
    // Only awaitResults runs get here for a platform-answered tool (see callValue).
    throw new ToolCallError(`client tool ${entry.callableName} is answered by the platform; it cannot be awaited with awaitResults.`);
  }

  private async callNamespace(call: BridgeCall, args: Record<string, unknown>, signal: AbortSignal, gate?: CallGate): Promise<unknown> {
    const entry = this.catalog.mcpTool(args.server, args.tool);
    if (!entry?.mcpBinding || !this.deps.mcp)
      throw new ToolCallError(`MCP tool ${String(args.server)}.${String(args.tool)} is not available.`);
    const binding = entry.mcpBinding;
    const input = mapMcpArguments(entry.inputSchema, Array.isArray(args.args) ? args.args : []);
    this.counts.callCount += 1;
    await this.policy.admit(call, entry, input, signal, gate);
    return this.recorded(call, entry, input, signal, () =>
      this.deps.mcp!.callTool(binding.serverName, binding.toolName, input, { signal, idempotencyKey: this.callKey(call) }),
    );
  }

  /**
   * `tool.called` before the call, `tool.settled` before the guest sees its outcome. A replay-safe
   * run's events carry the input and the outcome as the guest sees it, so a replay can answer the
   * call from the log instead of calling the tool again.
   */
  private async recorded(
    call: BridgeCall,
    entry: CatalogEntry,
    input: unknown,
    signal: AbortSignal,
    run: () => Promise<unknown>,
  ): Promise<unknown> {
    const { runId, epoch } = this.run;
    const tool = entry.callableName;
    await this.appendCalled(call, entry, input);
    const started = Date.now();
    try {
      const value = await run();
      this.deps.metrics.toolCalled(entry.source, true, Date.now() - started);
      const data = toolSettledData({ callId: call.id, tool, durationMs: Date.now() - started }, { ok: true, value }, this.run.restartSafe);
      await this.logged({ type: 'tool.settled', runId, epoch, data });
      return value;
    } catch (error) {
      this.deps.metrics.toolCalled(entry.source, false, Date.now() - started);
      // Cut off because the run was discarded (aborted, handed over): not the tool's outcome, so
      // not recorded as one; a replay makes the call again.
      if (signal.aborted) throw error;
      const message = error instanceof Error ? error.message : String(error);
      // The guest's rejection is {name, message} of the error (see RunBridge).
      const outcome = { ok: false, error: { name: error instanceof Error ? error.name : 'Error', message } } as const;
      const data = toolSettledData({ callId: call.id, tool, durationMs: Date.now() - started }, outcome, this.run.restartSafe);
      await this.logged({ type: 'tool.settled', runId, epoch, data }).catch((failure: unknown) => {
        if (failure instanceof ToolCallError) throw failure;
      });
      throw error;
    }
  }

  /** `platform`: only the platform answers it (POST …/tool-results checks answers against this). */
  private async appendCalled(call: BridgeCall, entry: CatalogEntry, input: unknown, platform = false): Promise<void> {
    const { runId, epoch } = this.run;
    await this.logged({
      type: 'tool.called',
      runId,
      epoch,
      data: {
        callId: call.id,
        tool: entry.callableName,
        source: entry.source,
        inputBytes: jsonBytes(input),
        ...(platform ? { answeredBy: 'platform' } : {}),
        ...(entry.toolName === 'nodes.invoke' ? nodeCallOf(input) : {}),
        ...(this.run.restartSafe ? { input } : {}),
        ...(call.callNumber === undefined ? {} : { callKey: this.callKey(call) }),
      },
    });
  }

  /** SPEC §16: `<runId>:<n>`, n numbered by the sandbox in the order the guest made its tool calls. */
  private callKey(call: BridgeCall): string | undefined {
    return call.callNumber === undefined ? undefined : `${this.run.runId}:${call.callNumber}`;
  }

  /** Appends a run event; at the history cap the run is stopped and the call rejects with the cap's message. */
  private async logged(input: Parameters<EventLog['append']>[1]): Promise<void> {
    try {
      await this.appends.append(input);
    } catch (error) {
      if (!(error instanceof RunHistoryLimitError)) throw error;
      this.historyLimitReached = true;
      this.deps.stopRun(this.run.runId);
      throw new ToolCallError(RUN_HISTORY_LIMIT_MESSAGE);
    }
  }

  /** Any handle's entry, MCP tools included (`describe()` on `MCP.<server>.<tool>`). */
  private requireHandle(name: unknown): CatalogEntry {
    const entry = typeof name === 'string' ? findByCallableName(this.catalog.entries, name) : undefined;
    if (!entry) throw new ToolCallError(`unknown tool ${String(name)}; use catalog.search(query) to find tools.`);
    return entry;
  }

  private requireTool(name: unknown): CatalogEntry {
    const entry = this.catalog.byCallableName(name, this.run);
    if (!entry) throw new ToolCallError(`unknown tool ${String(name)}; use catalog.search(query) to find tools.`);
    return entry;
  }

  private storeBuffer(): Promise<StoreBuffer> {
    this.store ??= this.deps.sessionStore.snapshot(this.run.ref).then((committed) => {
      this.storeSnapshot = new StoreBuffer(committed);
      return this.storeSnapshot;
    });
    return this.store;
  }
}

function argsOf(call: BridgeCall): Record<string, unknown> {
  return typeof call.args === 'object' && call.args !== null && !Array.isArray(call.args) ? (call.args as Record<string, unknown>) : {};
}

/** SPEC §15: what `tool.called` says of a `nodes.invoke` call (node and command, when they are strings). */
function nodeCallOf(input: unknown): { node?: string; command?: string } {
  const { node, command } = (typeof input === 'object' && input !== null ? input : {}) as { node?: unknown; command?: unknown };
  return { ...(typeof node === 'string' ? { node } : {}), ...(typeof command === 'string' ? { command } : {}) };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}

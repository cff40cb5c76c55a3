import type { GuestCatalog, Policy, SessionRef } from '@codemode/contracts';
import { apiList, apiRead, describe, findByCallableName, handleMetadata, withPlatformApiFiles, type CatalogEntry } from '@codemode/catalog';
import {
  isStoreUnavailable,
  storeStopMessage,
  toStoreError,
  type ApprovalLedger,
  type EventLog,
  type StoredApproval,
} from '@codemode/events';
import type { BridgeHost, CallGate, ExternalSettlement } from '@codemode/sandbox';
import type { BridgeCall } from '@codemode/cells';
import { ResultUnavailableError, StoreBuffer, type ResultsStore, type SessionStore } from '@codemode/store';
import { SHARED_SLICES, type SessionToolCatalog } from '@codemode/tools';
import type { WorkerMetrics } from '@codemode/telemetry';
import { CallPolicy } from './call-policy';
import type { ToolKind } from './kinds/tool-kind';
import { RunEventWriter } from './run-event-writer';
import { argsOf, ToolCallPipeline } from './tool-call-pipeline';
import { ToolCallError } from './tool-call-error';
import type { ToolRun } from './tool-run';

/** What a run's bridge needs from the worker beyond its tool kinds. */
export interface ToolDeps {
  events: Pick<EventLog, 'append' | 'appendAll'>;
  results: Pick<ResultsStore, 'save' | 'load' | 'delete'>;
  sessionStore: Pick<SessionStore, 'snapshot'>;
  metrics: WorkerMetrics;
  /** The run's history reached its cap (SPEC §6), or a host call met a Redis failure: stop its cell now. */
  stopRun: (runId: string) => void;
  approvals: ApprovalLedger;
  /** CODEMODE_APPROVAL_TIMEOUT_SECONDS in ms (SPEC §11). */
  approvalTimeoutMs: number;
  /** A call of this run now waits for an approval (the optional approval webhook). */
  approvalRequested: (ref: SessionRef, approval: StoredApproval) => void;
  /** The session's policy as it stands now (tenant's and session's merged), read again at each resumed leg. */
  readPolicy: () => Promise<Policy>;
  /** Every kind of tool call, for this run (`toolKinds`). */
  kinds: readonly ToolKind[];
}

/** A parked run's tool host as its image keeps it (SPEC §12). */
export interface ParkedHostState {
  counts: { searchCount: number; describeCount: number; callCount: number };
  storeWrites: [string, string | null][];
}

/**
 * The host side of one run's bridge (SPEC §4–§5): tool calls go through the run's
 * `ToolCallPipeline`; the host surfaces (search, describe, API files, results, the session store)
 * are answered here. It keeps the run's buffered store writes and telemetry counters, and lives
 * as long as the run, across waits.
 */
export class RunToolHost implements BridgeHost {
  private readonly counts = { searchCount: 0, describeCount: 0, callCount: 0 };
  /** Created once, on the first store/load: concurrent first calls share it. */
  private store: Promise<StoreBuffer> | undefined;
  private storeSnapshot: StoreBuffer | undefined;
  private legDeadline = 0;
  private storeFailed: unknown;
  /** The run was stopped on a failed write (`stop`): once, whichever write met it first. */
  private stopped = false;
  private replayedListener: (() => void) | undefined;
  /** The run's tool policy (SPEC §11), checked before every tool call is dispatched. */
  private readonly policy: CallPolicy;
  private legsBegun = 0;
  private readonly events: RunEventWriter;
  private readonly tools: ToolCallPipeline;
  private claim: { beforeRequest(): Promise<void> | undefined } | undefined;

  constructor(
    readonly run: ToolRun,
    readonly catalog: SessionToolCatalog,
    private readonly deps: ToolDeps,
    policy: Policy,
  ) {
    this.events = new RunEventWriter(deps.events, run, () => this.stop());
    this.policy = new CallPolicy(policy, run, {
      approvals: deps.approvals,
      metrics: deps.metrics,
      approvalTimeoutMs: deps.approvalTimeoutMs,
      requested: (approval) => deps.approvalRequested(run.ref, approval),
      endpointOf: (entry) => (entry.source === 'client' ? catalog.clientTools.get(entry.toolName)?.endpoint : undefined),
      append: (type, data) => this.events.append({ type, runId: run.runId, epoch: run.epoch, data }),
      readyToWrite: () => this.events.readyToWrite(),
    });
    this.tools = new ToolCallPipeline({
      run,
      catalog,
      kinds: deps.kinds,
      policy: this.policy,
      events: this.events,
      metrics: deps.metrics,
      counted: () => {
        this.counts.callCount += 1;
      },
      legLeft: () => this.legDeadline - Date.now(),
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
    return this.events.historyFull;
  }

  /**
   * A host call, or the write of a read's events after it answered, met a Redis failure and
   * stopped the run: what it fails with (runtime_unavailable), else null.
   */
  get storeFailure(): string | null {
    const failure = this.storeFailed ?? this.events.storeFailure;
    return failure === undefined ? null : storeStopMessage(toStoreError(failure));
  }

  /** A read's events could not be written for another cause (RunEventWriter.unrecorded): the run was stopped, and fails. */
  get eventsUnrecorded(): boolean {
    return this.events.unrecorded;
  }

  /** Resolves once the events of the run's calls are all written (or the run was stopped on them): then its leg may be recorded. */
  landed(): Promise<void> {
    return this.events.landed();
  }

  /** Sends the run's held events now with the mark its end is then sent behind (RunEventWriter.sendMarkedTrail), or undefined. */
  sendMarkedTrail(): string | undefined {
    return this.events.sendMarkedTrail();
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

  /** SPEC §13: the run's requests wait for its claim (a new cell that starts before it: the worker's ClaimGate). */
  gateRequests(claim: { beforeRequest(): Promise<void> | undefined }): void {
    this.claim = claim;
  }

  beforeDispatch(): Promise<void> | undefined {
    return this.claim?.beforeRequest();
  }

  answeredByPlatform(call: BridgeCall): boolean {
    return this.tools.handsToPlatform(call);
  }

  /** `id` is a call of this running run that waits in flight for the platform's answer (`settlePlatform`). */
  awaitsPlatform(id: string): boolean {
    return this.tools.awaitsPlatform(id);
  }

  /** The platform's answer to such a call (already recorded as its `tool.settled`); false when it waits for none. */
  settlePlatform(id: string, outcome: ExternalSettlement): boolean {
    return this.tools.settlePlatform(id, outcome);
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
      this.stop();
      throw new ToolCallError(storeStopMessage(toStoreError(error)));
    }
  }

  /** Stops the run (its VM discarded): a write of it could not be recorded. */
  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.deps.stopRun(this.run.runId);
  }

  private async dispatchCall(call: BridgeCall, signal: AbortSignal, gate?: CallGate): Promise<unknown> {
    const args = argsOf(call);
    switch (call.method) {
      case 'callValue':
      case 'namespace':
        return this.tools.call(call, signal, gate);
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
        // A write outside the log comes after the run's reads' events too (RunEventWriter.trail).
        await this.events.readyToWrite();
        return this.deps.results.save(this.run.ref, JSON.stringify(args.value ?? null), this.run.limits);
      case 'resultLoad':
        return JSON.parse(await this.deps.results.load(this.run.ref, args.id)) as unknown;
      case 'resultDelete':
        await this.events.readyToWrite();
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

  /** Any handle's entry, MCP tools included (`describe()` on `MCP.<server>.<tool>`). */
  private requireHandle(name: unknown): CatalogEntry {
    const entry = typeof name === 'string' ? findByCallableName(this.catalog.entries, name) : undefined;
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

import { ABORTED_MESSAGE, failedOutcome, NOT_STARTED_MESSAGE, type CellOutcome } from '@codemode/cells';
import { FairQueue } from '@codemode/fairness';
import { GUEST_PRELUDE_VERSION, type ParkedImageBinding } from '../engine/parked-image';
import type { BridgeHost, CellRunRequest, ExternalSettlement, RestorePlan, ResumeOptions } from '../engine/types';
import { wasmFileHash } from '../engine/wasm-loader';
import { ParkedRunBusyError, ParkedRunNotFoundError, SandboxPoolClosedError, SandboxStartError, UnknownBridgeCallError } from '../errors';
import { threadScriptPath } from '../thread/thread-script';
import { GuestThreadShare } from './guest-share';
import { type ParkedEviction, ParkedRuns } from './parked-runs';
import { DEFAULT_MAX_PARKED, type RunsLostListener, type SandboxPoolOptions, type SandboxPoolStats } from './pool-options';
import { type MovedRun, type PoolLogger, PoolThread } from './pool-thread';
import type { QueuedCell } from './queued-cell';
import { pickThread } from './thread-placement';

/** How soon the queue is looked at again while only tenants at their thread share wait in it. */
const GUEST_SHARE_RECHECK_MS = 5;

const RESPAWN_BACKOFF_MS = 1000;
/** The fair queue's lane for rescued runs: no tenant's cells wait ahead of them for long. */
const RESCUE_LANE = '\u0000rescue';

/**
 * A pool of cell threads. Cells wait in a fair queue until a thread may take them (`pickThread`)
 * and their tenant is within its thread share (`GuestThreadShare`). A run that ends `waiting`
 * stays parked in its thread (`ParkedRuns`: slots, memory budget, eviction), and `resume`,
 * `settle` and `discard` are routed there. Runs rescued from a terminated thread queue in a lane
 * of their own and go on on another.
 */
export class SandboxPool {
  private readonly threads = new Set<PoolThread>();
  /** Cells waiting for a thread, handed out round-robin across tenants (SPEC §10 fairness). */
  private readonly queue = new FairQueue<QueuedCell>();
  /** Parked runs, the thread holding each VM, and which leave memory when room is needed. */
  private readonly parked: ParkedRuns;
  /** Runs being resumed (they keep their parked slot), with their thread. */
  private readonly resuming = new Map<string, PoolThread>();
  /** Runs in their first leg (started by `run`, not yet answered). */
  private readonly starting = new Map<string, PoolThread>();
  /** Runs taken out of a terminated thread, waiting in the queue for another (SPEC §10). */
  private readonly moving = new Map<string, QueuedCell>();
  /** SPEC §10: the threads whose guest time each tenant holds. */
  private readonly share: GuestThreadShare;
  private recheck: NodeJS.Timeout | undefined;
  private readonly lostListeners: RunsLostListener[] = [];
  private readonly script = threadScriptPath();
  private readonly log: PoolLogger;
  private closed = false;
  /** What parked-run images of this pool are bound to (SPEC §12). */
  private binding: ParkedImageBinding = { wasmHash: '', preludeVersion: GUEST_PRELUDE_VERSION };

  private constructor(private readonly options: SandboxPoolOptions) {
    this.log = options.logger ?? (() => undefined);
    const maxParked = options.maxParked ?? DEFAULT_MAX_PARKED;
    this.parked = new ParkedRuns({ ...options, maxParked }, this.log);
    this.share = new GuestThreadShare(
      (runId) => this.parked.tenantOf(runId),
      () => options.maxGuestThreadsPerTenant?.(),
      options.threads,
    );
  }

  /** Spawns the threads (each compiles the wasm and prepares an instance); resolves when all are ready. */
  static async start(options: SandboxPoolOptions): Promise<SandboxPool> {
    if (!Number.isInteger(options.threads) || options.threads < 1) {
      throw new SandboxStartError('a sandbox pool needs at least one thread');
    }
    const pool = new SandboxPool(options);
    pool.binding = { wasmHash: await wasmFileHash(options.variant ?? 'release'), preludeVersion: GUEST_PRELUDE_VERSION };
    const spawned = Array.from({ length: options.threads }, () => pool.spawn());
    try {
      const timings = await Promise.all(spawned.map((thread) => thread.ready));
      // At debug: the worker's start writes one line at info (SPEC §19).
      pool.log('debug', 'sandbox pool ready', { threads: options.threads, timings });
      return pool;
    } catch (error) {
      await pool.close();
      throw error;
    }
  }

  /**
   * Runs a cell. It may end `waiting`: its VM is then parked until `resume` or `discard`. A cell no
   * thread starts within its budget is not run.
   */
  run(request: CellRunRequest, host?: BridgeHost, tenant = ''): Promise<CellOutcome> {
    return this.enqueue(request, host, tenant);
  }

  /**
   * SPEC §12: continues a parked run from its image (made by a pool of the same binding, see
   * `imageBinding`) on a new VM of one of these threads: a resumed leg of `request.limits.timeoutMs`,
   * queued like a new cell. An image this pool cannot restore ends `runtime_unavailable`.
   */
  restore(request: CellRunRequest, image: Uint8Array, plan: RestorePlan, host?: BridgeHost, tenant = ''): Promise<CellOutcome> {
    return this.enqueue(request, host, tenant, { image, plan });
  }

  /** The wasm binary and guest prelude version this pool's images are bound to. */
  imageBinding(): ParkedImageBinding {
    return this.binding;
  }

  private enqueue(
    request: CellRunRequest,
    host: BridgeHost | undefined,
    tenant: string,
    restoring?: QueuedCell['restoring'],
  ): Promise<CellOutcome> {
    if (this.closed) return Promise.reject(new SandboxPoolClosedError());
    const queuedOutcome = new Promise<CellOutcome>((resolve) => {
      const queued: QueuedCell = {
        request,
        tenant,
        host,
        restoring,
        resolve,
        timer: setTimeout(() => this.expire(queued), request.limits.timeoutMs),
      };
      this.queue.push(tenant, queued);
      this.dispatch();
    });
    return queuedOutcome;
  }

  /**
   * Continues a parked run with a fresh budget: pending yields resolve first, then settlements that
   * arrived while it was parked, in settlement order. `host` answers calls made from now on.
   * @throws ParkedRunNotFoundError when no such run is parked here; ParkedRunBusyError when it is being resumed.
   */
  async resume(runId: string, options: ResumeOptions, host?: BridgeHost): Promise<CellOutcome> {
    if (this.closed) throw new SandboxPoolClosedError();
    if (this.resuming.has(runId)) throw new ParkedRunBusyError(runId);
    const thread = this.parked.takeForResume(runId);
    if (!thread) throw new ParkedRunNotFoundError(runId);
    this.resuming.set(runId, thread);
    try {
      const outcome = await thread.resume(runId, options, host);
      // A rescue may have moved the run to another thread (SPEC §10).
      return this.parked.admit(runId, this.resuming.get(runId) ?? thread, undefined, outcome);
    } finally {
      this.resuming.delete(runId);
    }
  }

  /**
   * The platform's answer to a platform-answered call of a parked (or resuming) run; applied in
   * settlement order on the next resume.
   * @throws ParkedRunNotFoundError for an unknown run; UnknownBridgeCallError for an id that is not an unsettled platform call.
   */
  settle(runId: string, id: string, result: ExternalSettlement): void {
    const thread = this.parked.threadOf(runId) ?? this.resuming.get(runId);
    if (!thread) throw new ParkedRunNotFoundError(runId);
    if (!thread.settle(runId, id, result)) throw new UnknownBridgeCallError(runId, id);
  }

  /** `id` is an unsettled call of the run that only the platform answers (see `settle`). */
  awaitsPlatform(runId: string, id: string): boolean {
    const thread = this.parked.threadOf(runId) ?? this.resuming.get(runId);
    return thread?.awaitsPlatform(runId, id) ?? false;
  }

  /** The unsettled calls of a parked (or resuming) run that only the platform answers. */
  platformPending(runId: string): string[] {
    const thread = this.parked.threadOf(runId) ?? this.resuming.get(runId);
    return thread?.platformPending(runId) ?? [];
  }

  /**
   * Abort or expiry: aborts the run's pending host work and frees its VM; a leg in progress (its
   * first, or a resume) ends `aborted` at its next step. False when unknown.
   */
  discard(runId: string): boolean {
    const moving = this.moving.get(runId);
    if (moving && this.queue.remove(moving)) {
      this.moving.delete(runId);
      clearTimeout(moving.timer);
      const { bridge } = moving.moved!.run;
      bridge.close();
      moving.resolve(
        failedOutcome({ code: 'aborted', phase: 'host', error: ABORTED_MESSAGE }, { bridgeDispatchStarted: bridge.dispatchStarted }),
      );
      return true;
    }
    const thread = this.parked.threadOf(runId) ?? this.resuming.get(runId) ?? this.starting.get(runId);
    if (!thread) return false;
    this.parked.discard(runId);
    return thread.discard(runId);
  }

  /**
   * The host is working on calls of this parked run: its VM must stay (an image cannot carry a
   * call in progress, whose effect may already have happened).
   */
  hasHostWork(runId: string): boolean {
    return this.parked.threadOf(runId)?.hasHostWork(runId) ?? false;
  }

  /** SPEC §10: the run's leg waits only on the host (`PoolThread.waitsOnHost`); false while queued, moving or parked. */
  waitsOnHost(runId: string): boolean {
    if (this.moving.has(runId)) return false;
    return (this.starting.get(runId) ?? this.resuming.get(runId))?.waitsOnHost(runId) ?? false;
  }

  /** This pool has the run: queued, running a leg, parked or being resumed. */
  holds(runId: string): boolean {
    return (
      this.parked.has(runId) ||
      this.resuming.has(runId) ||
      this.starting.has(runId) ||
      this.queue.some((queued) => queued.request.runId === runId)
    );
  }

  parkedCount(): number {
    return this.parked.size;
  }

  /**
   * SPEC §12: with this set, a run that must park while every slot is taken, or past the memory
   * budget, evicts a parked run that may leave instead of failing (`ParkedMemory` says which);
   * `maxParked` then bounds only the VMs kept in memory.
   */
  evictWith(eviction: ParkedEviction): void {
    this.parked.evictWith(eviction);
  }

  /** Called with parked runs lost because their thread died (record them as `run.lost`). */
  onRunsLost(listener: RunsLostListener): void {
    this.lostListeners.push(listener);
  }

  stats(): SandboxPoolStats {
    let busy = 0;
    let idle = 0;
    let starting = 0;
    for (const thread of this.threads) {
      if (thread.state === 'starting') starting += 1;
      else if (thread.state === 'ready' && thread.activeLegs > 0) busy += 1;
      else if (thread.state === 'ready') idle += 1;
    }
    return { threads: this.threads.size, busy, idle, starting, parked: this.parked.size, parkedMemoryBytes: this.parked.memoryBytes };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.recheck);
    for (const queued of this.queue.drain()) {
      clearTimeout(queued.timer);
      queued.moved?.run.bridge.close();
      queued.resolve(notStarted('code mode sandbox pool closed'));
    }
    this.moving.clear();
    await Promise.all([...this.threads].map((thread) => thread.terminate()));
    this.threads.clear();
    this.parked.clear();
  }

  /** Evicts parked runs that may leave while the parked VMs are past the memory budget (`ParkedRuns`). */
  keepWithinBudget(): void {
    this.parked.keepWithinBudget();
  }

  private spawn(): PoolThread {
    const boot = { variant: this.options.variant ?? 'release', preparedCatalogJson: this.options.preparedCatalogJson };
    const thread = new PoolThread(this.script, boot, this.options.watchdogGraceMs ?? 300, {
      ready: () => {
        // `ready` also says "a prepared VM is there" (`warm`), which a starting thread can send
        // before it is ready: only readiness ends a replacement's hold for its culprit tenant.
        if (thread.state === 'ready') this.share.ready(thread);
        this.dispatch();
      },
      dead: (dead, beforeReady) => this.replace(dead, beforeReady),
      overran: (dead, runId) => this.share.overran(dead, runId),
      lost: (runIds, reason) => this.reportLost(runIds, reason),
      rescued: (moved) => this.rescue(moved),
      ended: (runId) => this.parked.ended(runId, thread),
      log: this.log,
    });
    this.threads.add(thread);
    return thread;
  }

  /** SPEC §10: runs of a terminated thread go on on other threads, ahead of new cells (FairQueue's own lane). */
  private rescue(moved: MovedRun[]): void {
    for (const entry of moved) {
      const queued: QueuedCell = {
        request: entry.run.request,
        // Only the queue reads it: the outcome goes back to the leg's own caller, which admits it.
        tenant: RESCUE_LANE,
        host: undefined,
        moved: entry,
        resolve: (outcome) => entry.leg.resolve(outcome),
        timer: setTimeout(() => this.expire(queued), entry.leg.timeoutMs),
      };
      this.queue.push(RESCUE_LANE, queued);
      this.moving.set(entry.run.runId, queued);
    }
    this.dispatch();
  }

  private reportLost(runIds: string[], reason: string): void {
    this.log('warn', 'parked code mode runs lost with their sandbox thread', { runIds, reason });
    for (const listener of this.lostListeners) {
      try {
        listener(runIds, reason);
      } catch (error) {
        this.log('error', 'onRunsLost listener failed', { error: String(error) });
      }
    }
  }

  private replace(dead: PoolThread, beforeReady: boolean): void {
    this.threads.delete(dead);
    const culprit = this.share.gone(dead);
    if (this.closed) return;
    if (beforeReady) this.log('error', 'sandbox thread died before it was ready; respawning after backoff');
    const respawn = () => {
      if (this.closed) return;
      const thread = this.spawn();
      // SPEC §10: the tenant whose overrun cost the thread holds its replacement until it is ready.
      if (culprit !== undefined) this.share.replacing(thread, culprit);
    };
    if (beforeReady) setTimeout(respawn, RESPAWN_BACKOFF_MS).unref();
    else respawn();
  }

  private dispatch(): void {
    while (this.queue.size > 0) {
      const thread = pickThread(this.threads);
      if (!thread) return;
      // Rescued runs always may go on.
      const queued = this.queue.shiftFirst((tenant) => tenant === RESCUE_LANE || this.share.mayTake(tenant, this.threads));
      if (!queued) {
        // Executing guest code ends without a message to the pool (it awaits a host call, or is done).
        this.recheck ??= setTimeout(() => {
          this.recheck = undefined;
          this.dispatch();
        }, GUEST_SHARE_RECHECK_MS).unref();
        return;
      }
      clearTimeout(queued.timer);
      const { runId } = queued.request;
      if (queued.moved) {
        this.moving.delete(runId);
        this.place(thread, queued.moved, queued);
        continue;
      }
      this.starting.set(runId, thread);
      this.share.legStarted(runId, queued.tenant);
      thread.run(queued.request, queued.host, queued.restoring).then(
        (outcome) => {
          // A rescue may have moved the run to another thread (SPEC §10).
          const at = this.starting.get(runId) ?? thread;
          this.starting.delete(runId);
          this.share.legEnded(runId);
          queued.resolve(this.parked.admit(runId, at, queued.tenant, outcome));
        },
        (error: unknown) => {
          this.starting.delete(runId);
          this.share.legEnded(runId);
          this.log('error', 'sandbox run failed on the host', { error: String(error) });
          queued.resolve(notStarted('code mode sandbox thread refused the run'));
        },
      );
    }
  }

  /** A moved run goes on on `thread`; the caller waiting for its leg gets that outcome. */
  private place(thread: PoolThread, moved: MovedRun, queued: QueuedCell): void {
    const { runId } = moved.run;
    if (this.starting.has(runId)) this.starting.set(runId, thread);
    if (this.resuming.has(runId)) this.resuming.set(runId, thread);
    let outcome: Promise<CellOutcome>;
    try {
      outcome = thread.adopt(moved);
    } catch (error) {
      this.log('error', 'a rescued run could not be placed', { runId, error: String(error) });
      moved.run.bridge.close();
      queued.resolve(notStarted('code mode sandbox thread refused the run'));
      return;
    }
    void outcome.then((result) => queued.resolve(result));
  }

  private expire(queued: QueuedCell): void {
    if (!this.queue.remove(queued)) return;
    if (queued.moved) {
      this.moving.delete(queued.request.runId);
      queued.moved.run.bridge.close();
    }
    queued.resolve(notStarted(NOT_STARTED_MESSAGE));
  }
}

function notStarted(error: string): CellOutcome {
  return failedOutcome({ code: 'runtime_unavailable', phase: 'host', error });
}

import { GUEST_PRELUDE_VERSION, type ParkedImageBinding } from '../engine/parked-image';
import type {
  BridgeHost,
  CellOutcome,
  CellRunRequest,
  ExternalSettlement,
  RestorePlan,
  ResumeOptions,
  SandboxVariant,
} from '../engine/types';
import { wasmFileHash } from '../engine/wasm-loader';
import {
  NOT_STARTED_MESSAGE,
  ParkedRunBusyError,
  ParkedRunNotFoundError,
  SandboxPoolClosedError,
  SandboxStartError,
  TOO_MANY_SUSPENDED_MESSAGE,
  UnknownBridgeCallError,
} from '../errors';
import { failedOutcome } from '../result/failed-outcome';
import { threadScriptPath } from '../thread/thread-script';
import { FairQueue } from './fair-queue';
import { type PoolLogger, PoolThread } from './pool-thread';

export interface SandboxPoolOptions {
  /** Number of worker threads; each executes one VM at a time but may hold several live runs. */
  threads: number;
  logger?: PoolLogger;
  /** QuickJS build. @default 'release' ('debug' adds assertions and leak checks; for tests) */
  variant?: SandboxVariant;
  /** How long past a leg's deadline the watchdog waits before terminating its thread. @default 300 */
  watchdogGraceMs?: number;
  /** Runs that may be parked at once in this pool (SPEC §3: 64 per worker process). @default 64 */
  maxParked?: number;
}

/** Parked runs that died with their thread (the watchdog terminated it, or it exited). */
export type RunsLostListener = (runIds: string[], reason: string) => void;

/**
 * SPEC §12: which parked runs may leave memory when the slots are full (their image is kept
 * elsewhere), and what to do once one has (its VM is gone; release it so any worker restores it).
 */
export interface ParkedEviction {
  evictable(runId: string): boolean;
  evicted(runId: string): void;
}

export interface SandboxPoolStats {
  threads: number;
  /** Ready threads with at least one run/resume in progress. */
  busy: number;
  idle: number;
  starting: number;
  parked: number;
}

interface Queued {
  request: CellRunRequest;
  host: BridgeHost | undefined;
  /** A parked run's image to restore instead of running the cell (SPEC §12). */
  restoring?: { image: Uint8Array; plan: RestorePlan };
  timer: NodeJS.Timeout;
  resolve(outcome: CellOutcome): void;
}

const RESPAWN_BACKOFF_MS = 1000;
export const DEFAULT_MAX_PARKED = 64;

/**
 * A pool of cell threads. A new cell goes to the ready thread with the fewest running legs, then
 * the fewest live runs (a terminate loses every run of a thread), preferring a prepared VM. A run
 * that ends `waiting` stays parked in its thread, and `resume` is routed there. At most
 * `maxParked` runs are parked or being resumed at once; a resuming run keeps its slot.
 */
export class SandboxPool {
  private readonly threads = new Set<PoolThread>();
  /** Cells waiting for a thread, handed out round-robin across tenants (SPEC §10 fairness). */
  private readonly queue = new FairQueue<Queued>();
  /** Parked runs and the thread holding each VM. */
  private readonly parked = new Map<string, PoolThread>();
  /** Runs being resumed (they keep their parked slot), with their thread. */
  private readonly resuming = new Map<string, PoolThread>();
  /** Runs in their first leg (started by `run`, not yet answered). */
  private readonly starting = new Map<string, PoolThread>();
  private readonly lostListeners: RunsLostListener[] = [];
  private eviction: ParkedEviction | undefined;
  private readonly script = threadScriptPath();
  private readonly log: PoolLogger;
  private readonly maxParked: number;
  private closed = false;
  /** What parked-run images of this pool are bound to (SPEC §12). */
  private binding: ParkedImageBinding = { wasmHash: '', preludeVersion: GUEST_PRELUDE_VERSION };

  private constructor(private readonly options: SandboxPoolOptions) {
    this.log = options.logger ?? (() => undefined);
    this.maxParked = options.maxParked ?? DEFAULT_MAX_PARKED;
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
      pool.log('info', 'sandbox pool ready', { threads: options.threads, timings });
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
    restoring?: Queued['restoring'],
  ): Promise<CellOutcome> {
    if (this.closed) return Promise.reject(new SandboxPoolClosedError());
    const queuedOutcome = new Promise<CellOutcome>((resolve) => {
      const queued: Queued = {
        request,
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
    const thread = this.parked.get(runId);
    if (!thread) throw new ParkedRunNotFoundError(runId);
    this.parked.delete(runId);
    this.resuming.set(runId, thread);
    try {
      return this.admit(runId, thread, await thread.resume(runId, options, host));
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
    const thread = this.parked.get(runId) ?? this.resuming.get(runId);
    if (!thread) throw new ParkedRunNotFoundError(runId);
    if (!thread.settle(runId, id, result)) throw new UnknownBridgeCallError(runId, id);
  }

  /** `id` is an unsettled call of the run that only the platform answers (see `settle`). */
  awaitsPlatform(runId: string, id: string): boolean {
    const thread = this.parked.get(runId) ?? this.resuming.get(runId);
    return thread?.awaitsPlatform(runId, id) ?? false;
  }

  /** The unsettled calls of a parked (or resuming) run that only the platform answers. */
  platformPending(runId: string): string[] {
    const thread = this.parked.get(runId) ?? this.resuming.get(runId);
    return thread?.platformPending(runId) ?? [];
  }

  /**
   * Abort or expiry: aborts the run's pending host work and frees its VM; a leg in progress (its
   * first, or a resume) ends `aborted` at its next step. False when unknown.
   */
  discard(runId: string): boolean {
    const thread = this.parked.get(runId) ?? this.resuming.get(runId) ?? this.starting.get(runId);
    if (!thread) return false;
    this.parked.delete(runId);
    return thread.discard(runId);
  }

  /**
   * The host is working on calls of this parked run: its VM must stay (an image cannot carry a
   * call in progress, whose effect may already have happened).
   */
  hasHostWork(runId: string): boolean {
    return this.parked.get(runId)?.hasHostWork(runId) ?? false;
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
   * SPEC §12: with this set, a run that must park while every slot is taken evicts the coldest
   * evictable parked run (parked longest ago) instead of failing; `maxParked` then bounds only the
   * VMs kept in memory.
   */
  evictWith(eviction: ParkedEviction): void {
    this.eviction = eviction;
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
    return { threads: this.threads.size, busy, idle, starting, parked: this.parked.size };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const queued of this.queue.drain()) {
      clearTimeout(queued.timer);
      queued.resolve(notStarted('code mode sandbox pool closed'));
    }
    await Promise.all([...this.threads].map((thread) => thread.terminate()));
    this.threads.clear();
    this.parked.clear();
  }

  /** A leg ended: a waiting outcome parks the run if a slot is free (a resuming run has one). */
  private admit(runId: string, thread: PoolThread, outcome: CellOutcome): CellOutcome {
    if (outcome.status !== 'waiting') return outcome;
    const resumingHere = this.resuming.has(runId);
    if (!resumingHere && this.parked.size + this.resuming.size >= this.maxParked && !this.evictColdest()) {
      thread.discard(runId);
      this.log('warn', 'too many suspended code mode runs; failing the run', { runId, maxParked: this.maxParked });
      return failedOutcome({ code: 'invalid_input', phase: 'host', error: TOO_MANY_SUSPENDED_MESSAGE }, outcome);
    }
    this.parked.set(runId, thread);
    return outcome;
  }

  /** Drops the VM of the parked run parked longest ago that may leave memory; false when none may. */
  private evictColdest(): boolean {
    const eviction = this.eviction;
    if (!eviction) return false;
    // `parked` keeps park order: a resumed run parks again at its end.
    for (const [runId, thread] of this.parked) {
      if (!eviction.evictable(runId)) continue;
      this.parked.delete(runId);
      thread.discard(runId);
      eviction.evicted(runId);
      return true;
    }
    return false;
  }

  private spawn(): PoolThread {
    const thread = new PoolThread(this.script, this.options.variant ?? 'release', this.options.watchdogGraceMs ?? 300, {
      ready: () => this.dispatch(),
      dead: (dead, beforeReady) => this.replace(dead, beforeReady),
      lost: (runIds, reason) => this.reportLost(runIds, reason),
      ended: (runId) => {
        if (this.parked.get(runId) === thread) this.parked.delete(runId);
      },
      log: this.log,
    });
    this.threads.add(thread);
    return thread;
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
    if (this.closed) return;
    if (beforeReady) this.log('error', 'sandbox thread died before it was ready; respawning after backoff');
    const respawn = () => {
      if (!this.closed) this.spawn();
    };
    if (beforeReady) setTimeout(respawn, RESPAWN_BACKOFF_MS).unref();
    else respawn();
  }

  private dispatch(): void {
    while (this.queue.size > 0) {
      const thread = this.pickThread();
      if (!thread) return;
      const queued = this.queue.shift()!;
      clearTimeout(queued.timer);
      const { runId } = queued.request;
      this.starting.set(runId, thread);
      thread.run(queued.request, queued.host, queued.restoring).then(
        (outcome) => {
          this.starting.delete(runId);
          queued.resolve(this.admit(runId, thread, outcome));
        },
        (error: unknown) => {
          this.starting.delete(runId);
          this.log('error', 'sandbox run failed on the host', { error: String(error) });
          queued.resolve(notStarted('code mode sandbox thread refused the run'));
        },
      );
    }
  }

  /**
   * A ready thread that has begun every leg it was given (so a new cell starts as soon as the guest
   * code on it yields, and waits for nothing queued behind it), with the fewest running legs, then
   * the fewest live runs, then a prepared VM.
   */
  private pickThread(): PoolThread | undefined {
    let best: PoolThread | undefined;
    let bestKey = Infinity;
    for (const thread of this.threads) {
      if (thread.state !== 'ready' || thread.legsWaitingToBegin > 0) continue;
      const key = thread.activeLegs * 1e6 + thread.liveRuns * 2 + (thread.warm ? 0 : 1);
      if (key < bestKey) {
        best = thread;
        bestKey = key;
      }
    }
    return best;
  }

  private expire(queued: Queued): void {
    if (!this.queue.remove(queued)) return;
    queued.resolve(notStarted(NOT_STARTED_MESSAGE));
  }
}

function notStarted(error: string): CellOutcome {
  return failedOutcome({ code: 'runtime_unavailable', phase: 'host', error });
}

import { Worker } from 'node:worker_threads';
import type {
  BridgeHost,
  CellOutcome,
  CellRunRequest,
  ExternalSettlement,
  RestorePlan,
  ResumeOptions,
  SandboxVariant,
} from '../engine/types';
import { ABORTED_MESSAGE, SandboxStartError, THREAD_LOST_MESSAGE, TIMEOUT_MESSAGE } from '../errors';
import { failedOutcome } from '../result/failed-outcome';
import type { FromThread, ThreadData, ToThread } from '../thread/protocol';
import { RunBridge } from './run-bridge';

/** V8 stack of a cell thread. Parser recursion needs ~25× QuickJS's 512 KiB limit; keep 2× margin. */
export const SANDBOX_THREAD_STACK_MB = 32;

/**
 * How long a watchdog that fired while the thread executes another run's code (or its own
 * housekeeping) keeps deferring before it blames its own run: longer than any budget (60 s).
 */
const MAX_DEFERRED_OVERRUN_MS = 65_000;

export type ThreadState = 'starting' | 'ready' | 'dead';
export type PoolLogger = (level: 'info' | 'warn' | 'error', msg: string, fields?: object) => void;

export interface PoolThreadEvents {
  /** The thread became ready or has its next VM prepared. */
  ready(thread: PoolThread): void;
  dead(thread: PoolThread, beforeReady: boolean): void;
  /** Parked runs that died with the thread (no caller is waiting for them). */
  lost(runIds: string[], reason: string): void;
  /** A run ended (terminal outcome, discarded, or lost): it holds no VM in this thread any more. */
  ended(runId: string): void;
  log: PoolLogger;
}

interface Leg {
  resolve(outcome: CellOutcome): void;
  watchdog?: NodeJS.Timeout;
  deferredSince?: number;
}

interface LiveRun {
  runId: string;
  slot: number;
  bridge: RunBridge;
  /** Set while a run/resume call waits for this run; unset while parked. */
  leg?: Leg;
  discarded: boolean;
  /** Its leg was posted and the thread has not begun it yet (no message from it since). */
  starting?: boolean;
}

/**
 * One worker thread seen from the pool, with every live run it holds (running legs and parked
 * VMs). A watchdog per running leg terminates the thread when that leg's guest code is still
 * executing `graceMs` after its budget (a native builtin ignoring the interrupt handler): the
 * culprit fails `timeout`, other running legs fail as lost, parked runs are reported `lost`.
 */
export class PoolThread {
  state: ThreadState = 'starting';
  /** Its next VM is prepared, so a run posted now starts without waiting for instance creation. */
  warm = false;
  readonly ready: Promise<{ compileMs: number; instanceMs: number; spawnMs: number }>;
  private readonly runs = new Map<string, LiveRun>();
  /** [0]: slot of the run whose guest code the thread is executing; [1]: slot of a run to abort. */
  private readonly busyFlag = new Int32Array(new SharedArrayBuffer(8));
  private nextSlot = 0;
  private legsNotBegun = 0;
  private readonly worker: Worker;
  private readyReject: ((error: Error) => void) | undefined;

  constructor(
    script: string,
    variant: SandboxVariant,
    private readonly graceMs: number,
    private readonly events: PoolThreadEvents,
  ) {
    const spawnedAt = performance.now();
    const workerData: ThreadData = { variant, busy: this.busyFlag.buffer };
    this.worker = new Worker(script, { workerData, resourceLimits: { stackSizeMb: SANDBOX_THREAD_STACK_MB } });
    this.ready = new Promise((resolve, reject) => {
      this.readyReject = reject;
      this.worker.on('message', (message: FromThread) => {
        if (message.type !== 'ready') return this.onMessage(message);
        this.state = 'ready';
        this.readyReject = undefined;
        this.warm = true;
        resolve({ compileMs: message.compileMs, instanceMs: message.instanceMs, spawnMs: performance.now() - spawnedAt });
        this.events.ready(this);
      });
    });
    this.ready.catch(() => undefined);
    this.worker.on('error', (error) => this.events.log('error', 'sandbox thread error', { error: String(error) }));
    this.worker.on('exit', (exitCode) => this.onExit(exitCode));
  }

  /** Live runs held here (running or parked): placement spreads them, since a terminate loses them all. */
  get liveRuns(): number {
    return this.runs.size;
  }

  /**
   * Legs posted that the thread has not begun yet. The pool gives a thread a new cell only when this
   * is 0, so cells wait in the pool's fair queue rather than in a thread's FIFO message queue.
   */
  get legsWaitingToBegin(): number {
    return this.legsNotBegun;
  }

  /** Runs with a run/resume call in progress. */
  get activeLegs(): number {
    let count = 0;
    for (const run of this.runs.values()) if (run.leg) count += 1;
    return count;
  }

  run(request: CellRunRequest, host: BridgeHost | undefined, restoring?: { image: Uint8Array; plan: RestorePlan }): Promise<CellOutcome> {
    if (this.state !== 'ready') throw new SandboxStartError(`sandbox thread is ${this.state}, not ready`);
    this.warm = false;
    const { runId } = request;
    const bridge = new RunBridge(
      host,
      (id, ok, payload) => this.post({ type: 'settle', runId, id, ok, payload }),
      (id) => this.post({ type: 'platform', runId, id }),
      (id, held) => this.post({ type: held ? 'hold' : 'unhold', runId, id }),
    );
    bridge.beginLeg(host, request.awaitResults === true);
    const run: LiveRun = { runId, slot: (this.nextSlot += 1), bridge, discarded: false };
    this.runs.set(runId, run);
    if (!restoring) return this.startLeg(run, { type: 'run', request, slot: run.slot });
    for (const id of restoring.plan.platform) bridge.awaitPlatform(id);
    return this.startLeg(run, { type: 'restore', request, slot: run.slot, ...restoring });
  }

  /** Resumes a run parked here; the pool guarantees it is parked (not in a leg). */
  resume(runId: string, options: ResumeOptions, host: BridgeHost | undefined): Promise<CellOutcome> {
    const run = this.runs.get(runId);
    if (!run || run.leg || this.state !== 'ready') throw new SandboxStartError(`run ${runId} is not parked in this thread`);
    run.bridge.beginLeg(host, options.awaitResults === true);
    const awaitResults = options.awaitResults === true;
    return this.startLeg(run, { type: 'resume', runId, timeoutMs: options.timeoutMs, awaitResults });
  }

  /** The host is still working on (or holding for an approval) calls of the run. */
  hasHostWork(runId: string): boolean {
    return (this.runs.get(runId)?.bridge.hostCallsInFlight ?? 0) > 0;
  }

  /** Passes the platform's answer to the run; false when the id is not one of its unsettled platform calls. */
  awaitsPlatform(runId: string, id: string): boolean {
    return this.runs.get(runId)?.bridge.awaitsPlatform(id) ?? false;
  }

  platformPending(runId: string): string[] {
    return this.runs.get(runId)?.bridge.platformPending() ?? [];
  }

  settle(runId: string, id: string, result: ExternalSettlement): boolean {
    return this.runs.get(runId)?.bridge.settleExternal(id, result) ?? false;
  }

  /** Aborts the run's host work and frees its VM; a running leg ends `aborted`. */
  discard(runId: string): boolean {
    const run = this.runs.get(runId);
    if (!run || run.discarded) return false;
    run.discarded = true;
    run.bridge.close();
    // Seen by the thread's interrupt handler even while the guest never yields to its event loop.
    if (run.leg) Atomics.store(this.busyFlag, 1, run.slot);
    this.post({ type: 'discard', runId });
    if (!run.leg) this.forget(run);
    return true;
  }

  async terminate(): Promise<void> {
    for (const run of [...this.runs.values()]) {
      this.end(
        run,
        failedOutcome(
          { code: 'runtime_unavailable', phase: 'host', error: 'code mode sandbox pool closed' },
          { bridgeDispatchStarted: run.bridge.dispatchStarted },
        ),
      );
    }
    this.state = 'dead';
    await this.worker.terminate();
  }

  private startLeg(run: LiveRun, message: ToThread): Promise<CellOutcome> {
    return new Promise((resolve) => {
      run.leg = { resolve };
      run.starting = true;
      this.legsNotBegun += 1;
      this.post(message);
    });
  }

  /** The thread has begun the run's leg (it said something about it): the pool may send the next cell. */
  private begun(run: LiveRun): void {
    if (!run.starting) return;
    run.starting = false;
    this.legsNotBegun -= 1;
    if (this.state === 'ready') this.events.ready(this);
  }

  private onMessage(message: Exclude<FromThread, { type: 'ready' }>): void {
    if (message.type === 'log') return this.events.log(message.level, message.msg, message.fields);
    if (message.type === 'warm') {
      this.warm = true;
      return this.events.ready(this);
    }
    const run = this.runs.get(message.runId);
    if (!run) return;
    this.begun(run);
    if (message.type === 'bridge') run.bridge.dispatch(message.id, message.method, message.argsJson);
    else if (message.type === 'cancel') run.bridge.cancel(message.id);
    else if (message.type === 'watch') this.watch(run, message.timeoutMs);
    else if (message.type === 'replayed') run.bridge.replayed();
    else if (message.type === 'admitted') run.bridge.admitted(message.id);
    else if (message.type === 'done') this.onDone(run, message.outcome);
  }

  private onDone(run: LiveRun, outcome: CellOutcome): void {
    if (outcome.status === 'waiting' && !run.discarded) {
      const leg = run.leg;
      this.clearLeg(run);
      leg?.resolve(outcome);
      return;
    }
    if (run.discarded && outcome.status === 'waiting') {
      outcome = {
        ...failedOutcome(
          { code: 'aborted', phase: 'host', error: ABORTED_MESSAGE },
          { bridgeDispatchStarted: outcome.bridgeDispatchStarted },
        ),
        output: outcome.output,
      };
    }
    this.end(run, outcome);
  }

  private watch(run: LiveRun, timeoutMs: number | undefined): void {
    const leg = run.leg;
    if (!leg) return;
    clearTimeout(leg.watchdog);
    leg.watchdog = timeoutMs === undefined ? undefined : setTimeout(() => this.onOverrun(run), timeoutMs + this.graceMs);
  }

  private onOverrun(run: LiveRun): void {
    const leg = run.leg;
    if (!leg || this.state === 'dead') return;
    const now = performance.now();
    if (Atomics.load(this.busyFlag, 0) !== run.slot) {
      // The thread is executing another run (its own watchdog judges it) or idling between jobs.
      leg.deferredSince ??= now;
      if (now - leg.deferredSince < MAX_DEFERRED_OVERRUN_MS) {
        leg.watchdog = setTimeout(() => this.onOverrun(run), this.graceMs);
        return;
      }
    }
    this.events.log('warn', 'sandbox thread overran its deadline; terminating it', { runId: run.runId, liveRuns: this.runs.size });
    this.end(
      run,
      failedOutcome({ code: 'timeout', phase: 'guest', error: TIMEOUT_MESSAGE }, { bridgeDispatchStarted: run.bridge.dispatchStarted }),
    );
    this.loseAll('sandbox thread terminated: another run overran its deadline');
    this.state = 'dead';
    void this.worker.terminate();
  }

  private onExit(exitCode: number): void {
    const wasReady = this.readyReject === undefined;
    this.readyReject?.(new SandboxStartError(`sandbox thread exited with code ${exitCode} before it was ready`));
    this.loseAll(`sandbox thread exited with code ${exitCode}`);
    this.state = 'dead';
    this.events.dead(this, !wasReady);
  }

  /** Every run still here dies with the thread: running legs fail, parked runs are reported lost. */
  private loseAll(reason: string): void {
    const parked: string[] = [];
    for (const run of [...this.runs.values()]) {
      if (!run.leg) parked.push(run.runId);
      this.end(
        run,
        failedOutcome(
          { code: 'internal_error', phase: 'host', error: THREAD_LOST_MESSAGE },
          { bridgeDispatchStarted: run.bridge.dispatchStarted },
        ),
      );
    }
    if (parked.length > 0) this.events.lost(parked, reason);
  }

  /** Ends the run for good with `outcome` (delivered if a call waits for it). */
  private end(run: LiveRun, outcome: CellOutcome): void {
    const leg = run.leg;
    this.clearLeg(run);
    run.bridge.close();
    this.forget(run);
    leg?.resolve(outcome);
  }

  private forget(run: LiveRun): void {
    if (this.runs.get(run.runId) !== run) return;
    this.runs.delete(run.runId);
    this.events.ended(run.runId);
  }

  private clearLeg(run: LiveRun): void {
    clearTimeout(run.leg?.watchdog);
    run.leg = undefined;
    if (run.starting) {
      run.starting = false;
      this.legsNotBegun -= 1;
    }
  }

  private post(message: ToThread): void {
    this.worker.postMessage(message);
  }
}

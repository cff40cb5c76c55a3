import { Worker } from 'node:worker_threads';
import { ABORTED_MESSAGE, failedOutcome, THREAD_LOST_MESSAGE, TIMEOUT_MESSAGE, type CellOutcome } from '@codemode/cells';
import type { BridgeHost, CellRunRequest, ExternalSettlement, RestorePlan, ResumeOptions } from '../engine/types';
import { SandboxStartError } from '../errors';
import type { FromThread, ThreadData, ToThread } from '../thread/protocol';
import { LegWatchdog } from './leg-watchdog';
import type { LiveRun, MovedRun } from './live-run';
import { rescuable, rescueMessage } from './rescue-message';
import { RescueTrail } from './rescue-trail';
import { RunBridge } from './run-bridge';

export type { MovedRun };

/** V8 stack of a cell thread. Parser recursion needs ~25× QuickJS's 512 KiB limit; keep 2× margin. */
export const SANDBOX_THREAD_STACK_MB = 32;

export type ThreadState = 'starting' | 'ready' | 'dead';
export type PoolLogger = (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: object) => void;

export interface PoolThreadEvents {
  /** The thread became ready or has its next VM prepared. */
  ready(thread: PoolThread): void;
  dead(thread: PoolThread, beforeReady: boolean): void;
  /** Parked runs that died with the thread (no caller is waiting for them). */
  lost(runIds: string[], reason: string): void;
  /** SPEC §10: runs in a leg taken out of a thread terminated for another run's overrun, to go on elsewhere (`adopt`). */
  rescued(runs: MovedRun[]): void;
  /** A run ended (terminal outcome, discarded, or lost): it holds no VM in this thread any more. */
  ended(runId: string): void;
  /** SPEC §10: `runId` overran its deadline, and the thread is being terminated for it. */
  overran(thread: PoolThread, runId: string): void;
  log: PoolLogger;
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
    boot: Omit<ThreadData, 'busy'>,
    private readonly graceMs: number,
    private readonly events: PoolThreadEvents,
  ) {
    const spawnedAt = performance.now();
    const workerData: ThreadData = { ...boot, busy: this.busyFlag.buffer };
    this.worker = new Worker(script, { workerData, resourceLimits: { stackSizeMb: SANDBOX_THREAD_STACK_MB } });
    this.ready = new Promise((resolve, reject) => {
      this.readyReject = reject;
      this.worker.on('message', (message: FromThread) => {
        if (message.type === 'bridges') return message.calls.forEach((call) => this.onMessage(call));
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

  /**
   * The thread is executing some run's guest code right now: a cell posted here waits behind it,
   * and behind a native builtin that may not end before the watchdog terminates the thread.
   */
  get executingGuestCode(): boolean {
    return Atomics.load(this.busyFlag, 0) !== 0;
  }

  /**
   * Runs that hold the thread's guest time now or next: the one whose guest code it is executing,
   * and those whose leg has not called the host yet (SPEC §10: the pool counts a tenant's threads
   * by them). A run waiting on a host call holds no guest time.
   */
  guestRunIds(): string[] {
    const slot = Atomics.load(this.busyFlag, 0);
    const ids: string[] = [];
    for (const run of this.runs.values()) if (run.slot === slot || run.leg?.beforeHostCall === true) ids.push(run.runId);
    return ids;
  }

  /**
   * SPEC §10 fate isolation: the run's leg waits only on the host (timers, tool calls, platform
   * answers, approvals): the thread has begun it, it made a host call, and its guest code is not
   * executing now. False for a parked run (no leg) and a run not held here.
   */
  waitsOnHost(runId: string): boolean {
    const run = this.runs.get(runId);
    if (!run?.leg || run.discarded || this.state !== 'ready') return false;
    return run.starting !== true && !run.leg.beforeHostCall && Atomics.load(this.busyFlag, 0) !== run.slot;
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
    const bridge = new RunBridge(host, () => undefined);
    const awaitResults = request.awaitResults === true;
    bridge.beginLeg(host, awaitResults);
    const run = this.admitRun(runId, request, bridge);
    const budget = { timeoutMs: request.limits.timeoutMs, awaitResults };
    if (!restoring) return this.startLeg(run, { type: 'run', request, slot: run.slot }, budget);
    for (const id of restoring.plan.platform) bridge.awaitPlatform(id);
    return this.startLeg(run, { type: 'restore', request, slot: run.slot, ...restoring }, budget);
  }

  /**
   * SPEC §10: goes on with a run taken out of a terminated thread: a cell or restore that thread
   * never began starts here as it would have there; otherwise its rescue image is restored and its
   * leg goes on, with the settlements that thread had not applied and those that arrived since.
   * Calls the host is still working on settle here.
   */
  adopt(moved: MovedRun): Promise<CellOutcome> {
    if (this.state !== 'ready') throw new SandboxStartError(`sandbox thread is ${this.state}, not ready`);
    this.warm = false;
    const message = rescueMessage(moved);
    const run = this.admitRun(moved.run.runId, message.request, moved.run.bridge);
    const budget = { timeoutMs: message.request.limits.timeoutMs, awaitResults: moved.leg.awaitResults };
    const outcome = this.startLeg(run, { ...message, slot: run.slot }, budget);
    // A rescued leg waiting on the host holds no guest time until a settlement wakes it.
    if (message.type === 'rescue' && run.bridge.hostCallsInFlight > 0 && run.leg) run.leg.beforeHostCall = false;
    if (message.type === 'rescue') for (const id of run.bridge.platformPending()) this.post({ type: 'platform', runId: run.runId, id });
    return outcome;
  }

  private admitRun(runId: string, request: CellRunRequest, bridge: RunBridge): LiveRun {
    const run: LiveRun = { runId, slot: (this.nextSlot += 1), request, bridge, rescue: new RescueTrail(), discarded: false };
    this.runs.set(runId, run);
    bridge.rewire(
      (id, ok, payload) => {
        // Also while its leg is not begun: a terminate then sends its start again, and what was
        // posted behind it never reached the VM.
        run.rescue.posted({ id, ok, payload }, this.runs.size > 1 || run.starting === true);
        this.post({ type: 'settle', runId, id, ok, payload });
      },
      (id) => this.post({ type: 'platform', runId, id }),
      (id, held) => this.post({ type: held ? 'hold' : 'unhold', runId, id }),
    );
    return run;
  }

  /** Resumes a run parked here; the pool guarantees it is parked (not in a leg). */
  resume(runId: string, options: ResumeOptions, host: BridgeHost | undefined): Promise<CellOutcome> {
    const run = this.runs.get(runId);
    if (!run || run.leg || this.state !== 'ready') throw new SandboxStartError(`run ${runId} is not parked in this thread`);
    run.bridge.beginLeg(host, options.awaitResults === true);
    const awaitResults = options.awaitResults === true;
    const budget = { timeoutMs: options.timeoutMs, awaitResults };
    return this.startLeg(run, { type: 'resume', runId, timeoutMs: options.timeoutMs, awaitResults }, budget);
  }

  /** The host is still working on calls of the run (not counting calls held for an approval or answered by the platform). */
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

  private startLeg(run: LiveRun, message: ToThread, budget: { timeoutMs: number; awaitResults: boolean }): Promise<CellOutcome> {
    return new Promise((resolve) => {
      const watchdog = new LegWatchdog(
        this.graceMs,
        () => Atomics.load(this.busyFlag, 0) === run.slot,
        () => this.onOverrun(run),
      );
      run.leg = { resolve, start: message, timeoutMs: budget.timeoutMs, awaitResults: budget.awaitResults, beforeHostCall: true, watchdog };
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

  private onMessage(message: Exclude<FromThread, { type: 'ready' | 'bridges' }>): void {
    if (message.type === 'log') return this.events.log(message.level, message.msg, message.fields);
    if (message.type === 'warm') {
      this.warm = true;
      return this.events.ready(this);
    }
    const run = this.runs.get(message.runId);
    if (!run) return;
    // An image is taken while another run executes: it says nothing about this run's leg.
    if (message.type === 'rescue') return run.rescue.imaged(message.image, message.state);
    this.begun(run);
    if (message.type === 'bridge' && run.leg) run.leg.beforeHostCall = false;
    // The run's calls change (or its guest code runs again): its rescue image no longer holds.
    if (message.type === 'stale' || message.type === 'bridge' || message.type === 'cancel' || message.type === 'admitted') {
      run.rescue.stale();
    }
    if (message.type === 'bridge') run.bridge.dispatch(message.id, message.method, message.argsJson, message.callNumber);
    else if (message.type === 'cancel') run.bridge.cancel(message.id);
    else if (message.type === 'watch') run.leg?.watchdog.arm(message.timeoutMs);
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

  /** The run's guest code overran its leg's budget (`LegWatchdog`): it fails, and the thread is terminated. */
  private onOverrun(run: LiveRun): void {
    if (!run.leg || this.state === 'dead') return;
    this.events.log('warn', 'sandbox thread overran its deadline; terminating it', { runId: run.runId, liveRuns: this.runs.size });
    this.events.overran(this, run.runId);
    this.end(
      run,
      failedOutcome({ code: 'timeout', phase: 'guest', error: TIMEOUT_MESSAGE }, { bridgeDispatchStarted: run.bridge.dispatchStarted }),
    );
    const rescued = this.takeRescuable();
    this.loseAll('sandbox thread terminated: another run overran its deadline');
    this.state = 'dead';
    void this.worker.terminate();
    if (rescued.length > 0) {
      this.events.log('info', 'runs rescued from a terminated sandbox thread', { runIds: rescued.map((moved) => moved.run.runId) });
      this.events.rescued(rescued);
    }
  }

  /**
   * SPEC §10: the runs in a leg here that go on elsewhere: a leg the thread never began of a new
   * cell or restore, or any leg (begun or a parked run's resume) with a current rescue image.
   * They leave without ending: their host calls go on, settlements are kept until `adopt`.
   */
  private takeRescuable(): MovedRun[] {
    const moved: MovedRun[] = [];
    for (const run of [...this.runs.values()]) {
      const leg = run.leg;
      if (!leg || run.discarded || !rescuable(run, leg)) continue;
      leg.watchdog.stop();
      const begun = run.starting !== true;
      if (run.starting) {
        run.starting = false;
        this.legsNotBegun -= 1;
      }
      run.leg = undefined;
      this.runs.delete(run.runId);
      run.bridge.rewire(
        (id, ok, payload) => run.rescue.posted({ id, ok, payload }, true),
        () => undefined,
        () => undefined,
      );
      moved.push({ run, leg, begun });
    }
    return moved;
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
    run.leg?.watchdog.stop();
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

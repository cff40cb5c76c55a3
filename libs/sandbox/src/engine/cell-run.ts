import {
  BRIDGE_METHODS,
  jsonNestsDeeperThan,
  MAX_JSON_DEPTH,
  type BridgeMethod,
  type CodeModeOutput,
  type LegJournal,
} from '@codemode/contracts';
import {
  bridgeQueueLimitMessage,
  PENDING_WITHOUT_HOST_WORK_MESSAGE,
  SNAPSHOT_LIMIT_MESSAGE,
  type CellOutcome,
  type WaitingOutcome,
} from '@codemode/cells';
import { BridgeProtocolError, SandboxEngineError, ValueTooDeepError } from '../errors';
import { sleepDelay } from './bridge-args';
import { BridgeLedger } from './bridge-ledger';
import type { CellVm, VmHostSink } from './cell-vm';
import { classifyCompileError, classifyGuestError } from './guest-error';
import { LegOutcomes } from './leg-outcomes';
import { LegOutput } from './leg-output';
import { LegRecorder } from './leg-recorder';
import { captureParkedImage } from './park-image';
import type { ParkedRunState } from './parked-image';
import { dispatchedBefore, ReplayDriver, type ReplayStop } from './replay-driver';
import { RestartSafety } from './restart-safety';
import { SettlementInbox, type Wakeup } from './settlement-inbox';
import type { BridgePort, CellRunRequest, LegOptions, Settlement } from './types';

/** Jobs run per `executePendingJobs` call; the deadline is checked between batches. */
export const JOB_BATCH = 2000;

const METHODS: ReadonlySet<string> = new Set(BRIDGE_METHODS);

/**
 * Drives one cell on one VM across legs (the first `leg` runs the code, later ones resume it):
 * pump jobs, check the completion rule, sleep until the host settles a bridge request, repeat.
 * A leg ends completed, failed, or waiting (the VM is then parked and idle; its calls keep
 * running and their settlements queue here until the next leg applies them in arrival order).
 * Rebuilding a run from its log is the `ReplayDriver`'s, refusing unsafe calls the `RestartSafety`'s,
 * what an outcome carries the `LegOutcomes`'; a run restored from an image is adopted in `run-adoption.ts`.
 */
export class CellRun implements VmHostSink {
  private started = false;
  // Not private: a run restored from an image goes on from these (run-adoption.ts).
  dispatched = false;
  readonly ledger = new BridgeLedger();
  readonly inbox = new SettlementInbox();
  private readonly printed: LegOutput;
  private readonly recorder: LegRecorder;
  private readonly safety: RestartSafety;
  private readonly replay: ReplayDriver;
  private readonly outcomes: LegOutcomes;
  private admission: string | undefined;
  private aborted = false;
  private deadline = 0;
  private awaitResults = false;
  /** The next leg goes on with a rescued leg (its journal, output and yields as they were). */
  private carried = false;

  constructor(
    readonly vm: CellVm,
    readonly cell: CellRunRequest,
    readonly port: BridgePort,
  ) {
    // An abort must stop guest code that never yields to the thread's event loop.
    vm.stopWhen(() => port.abortRequested());
    this.printed = new LegOutput(cell.limits.maxOutputBytes);
    this.recorder = new LegRecorder(cell.restartSafe === true && cell.seed !== undefined);
    this.safety = new RestartSafety(cell, vm);
    this.replay = new ReplayDriver(vm, this.ledger, cell.replay);
    this.outcomes = new LegOutcomes(vm, this.printed, this.recorder, this.safety, () => this.dispatched);
  }

  /** The host side of this run that an image carries beside its VM (a park's, SPEC §12, or a rescue's, SPEC §10). */
  hostState(): ParkedRunState {
    return {
      ledger: this.ledger.state(),
      timers: this.recorder.timers(),
      dispatched: this.dispatched,
      output: this.printed.state(),
      seeded: this.cell.restartSafe === true && this.cell.seed !== undefined,
    };
  }

  /** This new run on a VM restored from an image goes on from the host state the image carried. */
  loadHostState(state: ParkedRunState): void {
    this.started = true;
    this.dispatched = state.dispatched;
    this.ledger.load(state.ledger);
    this.printed.load(state.output);
    this.recorder.loadTimers(state.timers);
  }

  /**
   * Queues a host settlement; it is applied between pumps, in arrival order. Its in-flight slot is
   * free from now: the next queued request starts, whether the run is in a leg or parked.
   */
  settleLater(settlement: Settlement): void {
    this.ledger.answer(settlement.id);
    this.inbox.push(settlement);
    this.flush();
    this.inbox.recheck();
  }

  /** The call is answered only by the platform: an idle VM waiting only on such calls parks at once. */
  markPlatform(id: string): void {
    if (this.ledger.markPlatform(id)) this.inbox.recheck();
  }

  /** The call steps aside for a decision (SPEC §11): its slot goes to the next queued request. */
  hold(id: string): void {
    if (!this.ledger.hold(id)) return;
    this.flush();
    this.inbox.recheck();
  }

  /** The held call was approved: it is admitted again as soon as a slot is free, parked or not. */
  unhold(id: string): void {
    if (!this.ledger.unhold(id)) return;
    this.flush();
    this.inbox.recheck();
  }

  /** A rescue image's view of the leg in progress (`engine/rescue-image.ts`); the VM is idle. */
  legState(): { output: CodeModeOutput[]; journal?: LegJournal; inbox: Settlement[]; remainingMs: number } {
    const journal = this.recorder.journal;
    return {
      output: this.printed.peek(),
      ...(journal ? { journal: structuredClone(journal) } : {}),
      inbox: this.inbox.queued(),
      remainingMs: this.deadline - performance.now(),
    };
  }

  /** The next leg continues a rescued one: its output so far and journal are kept, its yields stay open. */
  resumeLeg(output: CodeModeOutput[], journal: LegJournal | undefined): void {
    this.carried = true;
    this.printed.carry(output);
    this.recorder.continueLeg(journal);
  }

  /** Ends the current leg (if any) as `aborted` at its next step. */
  abort(): void {
    this.aborted = true;
    this.inbox.recheck();
  }

  async leg(options: LegOptions): Promise<CellOutcome> {
    this.awaitResults = options.awaitResults;
    if (!this.carried) this.recorder.startLeg();
    this.renew(options.timeoutMs, options.startedAt);
    try {
      return await this.drive(options.timeoutMs);
    } catch (error) {
      if (!(error instanceof SandboxEngineError)) throw error;
      return this.outcomes.engineFailure(error);
    } finally {
      // No `watch(undefined)`: the leg's outcome, posted next, stops the pool's watchdog (a message
      // and a wake-up of the pool's thread fewer per leg).
      this.port.busy(false);
      this.inbox.stop();
    }
  }

  private renew(timeoutMs: number, startedAt = performance.now()): void {
    this.deadline = startedAt + timeoutMs;
    this.vm.bind(this, this.deadline);
    this.port.watch(timeoutMs);
  }

  private async drive(timeoutMs: number): Promise<CellOutcome> {
    this.port.busy(true);
    const carried = this.carried;
    this.carried = false;
    const first = carried ? undefined : this.started ? this.releaseYields() : this.begin(timeoutMs);
    if (first) return first;
    const ttlDeadline = performance.now() + this.cell.limits.snapshotTtlSeconds * 1000;
    for (;;) {
      if (this.abortedNow()) return this.outcomes.aborted();
      const idle = this.vm.pump(JOB_BATCH);
      if (this.abortedNow()) return this.outcomes.aborted();
      const verdict = this.verdict(idle);
      if (verdict) return verdict;
      this.port.busy(false);
      let next = this.ledger.onlyHeld() ? await this.paused(ttlDeadline) : await this.inbox.next(this.deadline, this.aborted);
      if (next === 'deadline') {
        // The budget is spent while the VM is idle and host work is pending.
        if (!this.awaitResults) return this.park('pending_tools');
        this.port.watch(undefined);
        next = await this.inbox.next(ttlDeadline, this.aborted);
        if (next === 'deadline') return this.outcomes.timeout();
        this.renew(timeoutMs);
      }
      this.port.busy(true);
      if (next === 'recheck' || !this.closeCall(next.id)) continue;
      const thrown = this.apply(next.id, next.ok, next.payload);
      if (thrown) return this.outcomes.afterThrow(thrown);
    }
  }

  /** SPEC §11: idle, every unsettled call held: the budget (and watchdog) stops until a wakeup, at most until `until`. */
  private async paused(until: number): Promise<Wakeup> {
    const since = performance.now();
    const left = Math.max(0, this.deadline - since);
    this.port.watch(undefined);
    const next = await this.inbox.next(until, this.aborted);
    this.renew(left);
    return next;
  }

  private abortedNow(): boolean {
    if (this.port.abortRequested()) this.aborted = true;
    return this.aborted;
  }

  /** The first leg: runs the cell, or rebuilds it from its log first and goes on from there. */
  private begin(timeoutMs: number): CellOutcome | undefined {
    const plan = this.cell.replay;
    if (!plan) return this.startCell();
    // Each recorded leg had a budget of its own: the rebuild gets theirs, then the leg its own.
    if (plan.legs.length > 0) this.renew(timeoutMs * plan.legs.length);
    this.dispatched = dispatchedBefore(plan);
    const stop = this.replay.rebuild(plan, {
      startCell: () => this.startCell(),
      releaseYields: () => this.releaseYields(),
      pump: () => this.vm.pump(JOB_BATCH),
      abortedNow: () => this.abortedNow(),
    });
    if (stop) return this.replayStopped(stop);
    if (plan.legs.length > 0) this.renew(timeoutMs);
    this.port.replayed();
    // From here the run is live again: this leg's journal starts now.
    this.recorder.startLeg();
    if (plan.legs.length === 0) return this.startCell();
    const released = this.releaseYields();
    if (released) return released;
    for (const settlement of this.replay.answerOpenCalls(plan)) this.answeredFromLog(settlement);
    this.flush();
    return undefined;
  }

  private replayStopped(stop: ReplayStop): CellOutcome {
    if (stop === 'aborted') return this.outcomes.aborted();
    if (stop === 'timeout') return this.outcomes.timeout();
    return this.outcomes.fail(this.replay.failure());
  }

  /** A call the log saw settle: its recorded settlement is queued, as if it had just arrived. */
  private answeredFromLog(settlement: Settlement): void {
    this.dispatched = true;
    this.inbox.push(settlement);
  }

  /** Applies a settlement in the guest and journals it (restartSafe runs). */
  private apply(id: string, ok: boolean, payload: string): ReturnType<CellVm['settle']> {
    this.recorder.settled(id, ok, payload);
    return this.vm.settle(id, ok, payload);
  }

  clock(): number {
    if (this.replay.active) return this.replay.clock();
    const now = Date.now();
    this.recorder.clockRead(now);
    return now;
  }

  private startCell(): CellOutcome | undefined {
    this.started = true;
    const started = this.vm.start(this.cell.code, this.cell.catalogJson, this.cell.restartSafe ? this.cell.seed : undefined);
    if (this.abortedNow()) return this.outcomes.aborted();
    if (started.ok) return undefined;
    if (this.safety.refused) return this.outcomes.refused();
    if (this.vm.timedOut) return this.outcomes.timeout();
    return this.outcomes.fail(started.compile ? classifyCompileError(started.record) : classifyGuestError(started.record));
  }

  /**
   * On resume, pending yields resolve (to undefined) before any other settlement. Not journaled:
   * every resumed leg starts so, and a replay of it does the same.
   */
  private releaseYields(): CellOutcome | undefined {
    for (const id of this.ledger.ids('yield')) {
      this.ledger.close(id);
      const thrown = this.vm.settle(id, true, 'null');
      if (thrown) return this.outcomes.afterThrow(thrown);
    }
    return undefined;
  }

  /** The completion rule (SPEC §3); undefined means: wait for the host. */
  private verdict(idle: boolean): CellOutcome | undefined {
    if (this.replay.diverged) return this.outcomes.fail(this.replay.failure());
    if (this.safety.refused) return this.outcomes.refused();
    // Park only from an idle VM: one still running jobs at its deadline times out.
    if (this.vm.timedOut || !idle) return this.outcomes.timeout();
    if (this.admission) return this.outcomes.fail({ code: 'invalid_input', phase: 'guest', error: this.admission });
    const state = this.vm.promiseState();
    if (state === 'rejected') return this.outcomes.guest(this.vm.readRejection());
    if (this.ledger.size === 0)
      return state === 'pending'
        ? this.outcomes.fail({ code: 'internal_error', phase: 'guest', error: PENDING_WITHOUT_HOST_WORK_MESSAGE })
        : this.outcomes.completed();
    if (this.inbox.size > 0 || this.awaitResults) return undefined;
    if (this.ledger.onlyYields()) return this.park('yield');
    if (this.ledger.onlyParkable()) return this.park('pending_tools');
    return undefined;
  }

  private park(reason: WaitingOutcome['reason']): CellOutcome {
    const image = this.cell.parkImage ? captureParkedImage(this.vm, this.cell.runId, this.hostState()) : undefined;
    const snapshotBytes = image?.bytes.length ?? this.vm.snapshotBytes();
    if (snapshotBytes > this.cell.limits.maxSnapshotBytes) {
      return this.outcomes.fail({ code: 'snapshot_limit_exceeded', phase: 'guest', error: SNAPSHOT_LIMIT_MESSAGE });
    }
    const pending = this.ledger.pending(this.inbox.ids());
    this.recorder.parked(this.ledger.openIds());
    return this.outcomes.waiting({ reason, pending, snapshotBytes, memoryBytes: this.vm.memoryBytes(), ...(image ? { image } : {}) });
  }

  output(kind: number, text: string): void {
    // A replay re-runs legs whose output was already returned.
    if (!this.replay.active) this.printed.add(kind, text);
  }

  request(method: string, argsJson: string): string {
    if (!METHODS.has(method)) throw new BridgeProtocolError(`unknown code mode bridge method ${method}`);
    // SPEC §10 "Depth": the guest's values sit one level inside the args (`{"input": v}`), an MCP call's two (`{"args": [v]}`).
    if (jsonNestsDeeperThan(argsJson, MAX_JSON_DEPTH + (method === 'namespace' ? 2 : 1))) throw new ValueTooDeepError();
    this.safety.check(method, argsJson);
    const bridgeMethod = method as BridgeMethod;
    // SPEC §3: past the in-flight slots requests wait, up to MAX_QUEUED_BRIDGE_REQUESTS; one more fails the cell
    // (sticky: catching the error does not help). A replay re-makes calls the live run admitted: not checked again.
    const maxInFlight = this.cell.limits.maxPendingToolCalls;
    if (!this.admission && !this.replay.active && method !== 'yield' && this.ledger.full(maxInFlight)) {
      this.admission = bridgeQueueLimitMessage(maxInFlight);
    }
    if (this.admission) throw new BridgeProtocolError(this.admission);
    // Every request but a yield enters the queue; `flush` starts it at once when a slot is free.
    const id = this.ledger.add(bridgeMethod, argsJson, method !== 'yield');
    if (this.replay.active) {
      this.replay.checkCall(id, argsJson);
      return id;
    }
    this.recorder.call(id, argsJson);
    // Made before the worker died and settled in the log: its recorded outcome, not a second call.
    const fromLog = method === 'callValue' ? this.replay.answerFromLog(id, argsJson) : undefined;
    if (fromLog) {
      this.answeredFromLog(fromLog);
      return id;
    }
    if (method === 'yield') {
      // A yield is answered by the next resume; with awaitResults it resolves at once.
      if (this.awaitResults) this.inbox.push({ id, ok: true, payload: 'null' });
      return id;
    }
    this.flush();
    return id;
  }

  cancel(id: string): void {
    const queued = this.ledger.isQueued(id);
    if (!this.closeCall(id)) return;
    if (!queued) this.port.cancel(id);
    this.flush();
  }

  /** Starts queued requests, oldest first, while in-flight slots are free (never during a replay or once the run failed). */
  flush(): void {
    if (this.replay.active || this.admission || this.safety.refused || this.replay.diverged || this.aborted) return;
    const maxInFlight = this.cell.limits.maxPendingToolCalls;
    while (this.ledger.inFlight < maxInFlight) {
      const next = this.ledger.takeQueued();
      if (!next) return;
      const [id, method, argsJson, readmit] = next;
      if (readmit) this.port.admitted(id);
      else this.send(id, method, argsJson);
    }
  }

  private send(id: string, method: BridgeMethod, argsJson: string): void {
    this.dispatched = true;
    if (method !== 'sleep') {
      this.port.dispatch(id, method, argsJson, this.ledger.callNumber(id));
      return;
    }
    // A timer's delay runs from its start (a queued timer waited for its slot first).
    const rearmAt = this.replay.takeRearm(id);
    const due = rearmAt ?? Date.now() + sleepDelay(argsJson);
    this.recorder.timerStarted(id, due);
    this.port.dispatch(id, method, rearmAt === undefined ? argsJson : JSON.stringify([Math.max(0, rearmAt - Date.now())]));
  }

  /** Removes a settled or cancelled request; false when it was not open. */
  private closeCall(id: string): boolean {
    this.recorder.closed(id);
    return this.ledger.close(id);
  }
}

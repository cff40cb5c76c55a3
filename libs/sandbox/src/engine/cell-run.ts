import { BRIDGE_METHODS, type BridgeMethod, type CodeModeOutput, type LegJournal, type ReplayPlan } from '@codemode/contracts';
import {
  ABORTED_MESSAGE,
  BridgeProtocolError,
  PENDING_WITHOUT_HOST_WORK_MESSAGE,
  replayDivergedMessage,
  RESTART_SAFE_NAMESPACE_MESSAGE,
  RESTART_SAFE_SURFACE_MESSAGE,
  SandboxEngineError,
  SNAPSHOT_LIMIT_MESSAGE,
  STACK_OVERFLOW_TEXT,
  TIMEOUT_MESSAGE,
  bridgeQueueLimitMessage,
  MAX_QUEUED_BRIDGE_REQUESTS,
} from '../errors';
import { OUT_CONSOLE, OUT_JSON, OUT_TEXT } from '../guest/prelude';
import { ConsoleBudget } from '../result';
import { methodOf, sameCall, sameIds, sleepDelay, toolOf } from './bridge-args';
import { BridgeLedger } from './bridge-ledger';
import type { CellVm, VmHostSink } from './cell-vm';
import { classifyCompileError, classifyGuestError, type Failure, type GuestErrorRecord } from './guest-error';
import type { CellOutcome, CellRunRequest, WaitingOutcome } from './types';

/** Jobs run per `executePendingJobs` call; the deadline is checked between batches. */
export const JOB_BATCH = 2000;

/** Where the run sends bridge traffic and watchdog hints (in a thread: messages to the pool). */
export interface BridgePort {
  dispatch(id: string, method: BridgeMethod, argsJson: string): void;
  cancel(id: string): void;
  /** The leg spends budget from now for `timeoutMs` (arm the watchdog); undefined: it waits without budget. */
  watch(timeoutMs: number | undefined): void;
  /** The thread is (or stops) executing this run's guest code synchronously: watchdog attribution. */
  busy(on: boolean): void;
  /** The pool asked to abort this run (read from shared memory: seen even while guest code runs). */
  abortRequested(): boolean;
  /** The recorded legs were re-run; the live leg, with its own budget, starts now. */
  replayed(): void;
}

/** The host's answer to one bridge request; `payload` is JSON (the value, or `{name,message}`). */
export interface Settlement {
  id: string;
  ok: boolean;
  payload: string;
}

export interface LegOptions {
  timeoutMs: number;
  awaitResults: boolean;
  /** When the leg's budget started (the request's arrival in the thread). */
  startedAt?: number;
}

type Wakeup = Settlement | 'recheck' | 'deadline';

const METHODS: ReadonlySet<string> = new Set(BRIDGE_METHODS);
/** Methods a restartSafe cell may always call (SPEC §5); `callValue` only for replay-safe tools. */
const REPLAY_SAFE_METHODS: ReadonlySet<string> = new Set(['search', 'describe', 'yield', 'sleep', 'api']);

/** Why a restartSafe cell's call was refused: an MCP/namespace call, or any other unsafe surface. */
type Refusal = 'namespace' | 'surface';

/**
 * Drives one cell on one VM across legs (the first `leg` runs the code, later ones resume it):
 * pump jobs, check the completion rule, sleep until the host settles a bridge request, repeat.
 * A leg ends completed, failed, or waiting (the VM is then parked and idle; its calls keep
 * running and their settlements queue here until the next leg applies them in arrival order).
 */
export class CellRun implements VmHostSink {
  private readonly ledger = new BridgeLedger();
  private readonly queue: Settlement[] = [];
  private wake: ((why: 'recheck') => void) | undefined;
  private entries: CodeModeOutput[] = [];
  private readonly consoleBudget = new ConsoleBudget();
  private outputBytes = 0;
  private dispatched = false;
  private admission: string | undefined;
  /** Set when a restartSafe cell called a surface that is not replay-safe: the run fails at the next check. */
  private refusal: Refusal | undefined;
  /** Callable names of the catalog's replay-safe tools (consulted only for restartSafe cells). */
  private readonly replaySafeTools: ReadonlySet<string>;
  private started = false;
  private aborted = false;
  private deadline = 0;
  private awaitResults = false;
  /** restartSafe runs: what the current leg does (handed out with its outcome). */
  private journal: LegJournal | undefined;
  /** While recorded legs are re-run: the calls the current one recorded, and how many were made. */
  private replaying: { calls: [string, string][]; made: number } | undefined;
  /** The first difference between the replay and the log; the run fails with it. */
  private divergence: string | undefined;
  private recordedClock: readonly number[] = [];
  private clockReads = 0;
  /** When each dispatched timer is due (epoch ms), for the journal of the leg that parks with it open. */
  private readonly timerDue = new Map<string, number>();
  /** After a replay: open timers to re-arm for what is left until their recorded due time. */
  private readonly rearm = new Map<string, number>();

  constructor(
    private readonly vm: CellVm,
    private readonly cell: CellRunRequest,
    private readonly port: BridgePort,
  ) {
    // An abort must stop guest code that never yields to the thread's event loop.
    vm.stopWhen(() => port.abortRequested());
    const globals = cell.restartSafe ? (cell.catalog?.globals ?? []) : [];
    this.replaySafeTools = new Set(globals.filter((tool) => tool.replaySafe).map((tool) => tool.metadata.callableName));
  }

  /**
   * Queues a host settlement; it is applied between pumps, in arrival order. Its in-flight slot is
   * free from now: the next queued request starts, whether the run is in a leg or parked.
   */
  settleLater(settlement: Settlement): void {
    this.ledger.answer(settlement.id);
    this.queue.push(settlement);
    this.flush();
    this.wake?.('recheck');
  }

  /** The call is answered only by the platform: an idle VM waiting only on such calls parks at once. */
  markPlatform(id: string): void {
    if (this.ledger.markPlatform(id)) this.wake?.('recheck');
  }

  /** Ends the current leg (if any) as `aborted` at its next step. */
  abort(): void {
    this.aborted = true;
    this.wake?.('recheck');
  }

  async leg(options: LegOptions): Promise<CellOutcome> {
    this.awaitResults = options.awaitResults;
    this.journal = this.newJournal();
    this.renew(options.timeoutMs, options.startedAt);
    try {
      return await this.drive(options.timeoutMs);
    } catch (error) {
      if (!(error instanceof SandboxEngineError)) throw error;
      return this.fail({ code: 'internal_error', phase: 'guest', error: this.engineFailureText(error) });
    } finally {
      this.port.busy(false);
      this.port.watch(undefined);
    }
  }

  private renew(timeoutMs: number, startedAt = performance.now()): void {
    this.deadline = startedAt + timeoutMs;
    this.vm.bind(this, this.deadline);
    this.port.watch(timeoutMs);
  }

  private async drive(timeoutMs: number): Promise<CellOutcome> {
    this.port.busy(true);
    const first = this.started ? this.releaseYields() : this.begin(timeoutMs);
    if (first) return first;
    const ttlDeadline = performance.now() + this.cell.limits.snapshotTtlSeconds * 1000;
    for (;;) {
      if (this.abortedNow()) return this.fail({ code: 'aborted', phase: 'host', error: ABORTED_MESSAGE });
      const idle = this.vm.pump(JOB_BATCH);
      if (this.abortedNow()) return this.fail({ code: 'aborted', phase: 'host', error: ABORTED_MESSAGE });
      const verdict = this.verdict(idle);
      if (verdict) return verdict;
      this.port.busy(false);
      let next = await this.next(this.deadline);
      if (next === 'deadline') {
        // The budget is spent while the VM is idle and host work is pending.
        if (!this.awaitResults) return this.park('pending_tools');
        this.port.watch(undefined);
        next = await this.next(ttlDeadline);
        if (next === 'deadline') return this.timeout();
        this.renew(timeoutMs);
      }
      this.port.busy(true);
      if (next === 'recheck' || !this.closeCall(next.id)) continue;
      const thrown = this.apply(next.id, next.ok, next.payload);
      if (thrown) return this.afterThrow(thrown);
    }
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
    const failed = this.replayRecorded(plan);
    if (failed) return failed;
    if (plan.legs.length > 0) this.renew(timeoutMs);
    this.port.replayed();
    // From here the run is live again: this leg's journal starts now.
    this.journal = this.newJournal();
    if (plan.legs.length === 0) return this.startCell();
    const released = this.releaseYields();
    if (released) return released;
    this.pickUpOpenCalls(plan);
    return undefined;
  }

  /**
   * Calls still open when the run last parked were running on the worker that is gone: those the
   * log saw settle are answered from it, the others are made again (replay-safe surfaces only),
   * through the bridge queue in request order. A timer keeps its due time: it fires when it would
   * have on the worker that is gone.
   */
  private pickUpOpenCalls(plan: ReplayPlan): void {
    const dueTimes = new Map(plan.legs.flatMap((leg) => leg.timers ?? []));
    for (const [id, method] of this.ledger.openCalls()) {
      if (method === 'yield') continue;
      const recorded = plan.tail[id];
      if (recorded) {
        this.ledger.answer(id);
        this.dispatched = true;
        this.queue.push({ id, ok: recorded.ok, payload: recorded.payload });
        continue;
      }
      const due = method === 'sleep' ? dueTimes.get(id) : undefined;
      if (due !== undefined) this.rearm.set(id, due);
    }
    this.flush();
  }

  /**
   * Re-runs the recorded legs (SPEC §6): each starts as its live leg did (the cell, or released
   * yields), then applies the leg's settlements in their order, each followed by a pump. Calls are
   * not dispatched; each must match the record, and each leg must end parked on yields as it did.
   */
  private replayRecorded(plan: ReplayPlan): CellOutcome | undefined {
    this.recordedClock = plan.clock;
    this.dispatched = plan.legs.some((leg) => leg.calls.some(([id]) => methodOf(id) !== 'yield')) || Object.keys(plan.tail).length > 0;
    for (const [index, leg] of plan.legs.entries()) {
      const legName = `leg ${index + 1}`;
      this.replaying = { calls: leg.calls, made: 0 };
      const early = index === 0 ? this.startCell() : this.releaseYields();
      if (early) return this.divergence ? this.diverged() : this.divergeNow(`${legName} ended (${early.status}) where the run had parked`);
      if (!this.replayPump()) return this.replayStopped();
      for (const [id, ok, payload] of leg.settled) {
        if (this.divergence) break;
        if (!this.ledger.close(id)) return this.divergeNow(`the log settles ${id} in ${legName}, a call the replay has not made`);
        if (this.vm.settle(id, ok, payload)) return this.divergeNow(`settling ${id} in ${legName} threw where the recorded run went on`);
        if (!this.replayPump()) return this.replayStopped();
      }
      if (this.divergence) return this.diverged();
      if (this.replaying.made < leg.calls.length) {
        return this.divergeNow(`${legName} made ${this.replaying.made} of its ${leg.calls.length} recorded calls`);
      }
      const open = this.ledger.openCalls().map(([id]) => id);
      const openAsRecorded = leg.open ? sameIds(open, leg.open) : this.ledger.onlyYields();
      if (this.vm.promiseState() !== 'pending' || !openAsRecorded) {
        return this.divergeNow(`${legName} did not end with the calls open that the recorded run parked with`);
      }
    }
    this.replaying = undefined;
    if (this.clockReads < this.recordedClock.length) {
      return this.divergeNow(`the replay read the clock ${this.clockReads} times, the recorded run ${this.recordedClock.length}`);
    }
    return undefined;
  }

  /** Runs the replay's jobs to idle; false when it stopped (budget, abort, divergence). */
  private replayPump(): boolean {
    if (this.abortedNow() || this.divergence) return false;
    const idle = this.vm.pump(JOB_BATCH);
    return idle && !this.vm.timedOut && !this.abortedNow() && !this.divergence;
  }

  private replayStopped(): CellOutcome {
    if (this.abortedNow()) return this.fail({ code: 'aborted', phase: 'host', error: ABORTED_MESSAGE });
    if (this.divergence) return this.diverged();
    return this.timeout();
  }

  private divergeNow(detail: string): CellOutcome {
    this.divergence ??= detail;
    return this.diverged();
  }

  private diverged(): CellOutcome {
    this.vm.halt();
    return this.fail({ code: 'internal_error', phase: 'host', error: replayDivergedMessage(this.divergence ?? 'unknown difference') });
  }

  /** Records a divergence found inside a host call and stops the guest (it cannot catch it). */
  private divergeInCall(detail: string): never {
    this.divergence ??= detail;
    this.vm.halt();
    throw new BridgeProtocolError(replayDivergedMessage(this.divergence));
  }

  /** Applies a settlement in the guest and journals it (restartSafe runs). */
  private apply(id: string, ok: boolean, payload: string): ReturnType<CellVm['settle']> {
    const method = methodOf(id);
    // Yields and sleeps settle with null, successful tool calls are in their tool.settled event.
    const known = method === 'yield' || method === 'sleep' || (method === 'callValue' && ok);
    this.journal?.settled.push([id, ok, known ? null : payload]);
    return this.vm.settle(id, ok, payload);
  }

  private newJournal(): LegJournal | undefined {
    return this.cell.restartSafe && this.cell.seed ? { calls: [], settled: [], clock: [], timers: [] } : undefined;
  }

  clock(): number {
    if (this.replaying) {
      const recorded = this.recordedClock[this.clockReads];
      if (recorded === undefined)
        return this.divergeInCall(`the replay read the clock more often than the recorded run (${this.recordedClock.length} times)`);
      this.clockReads += 1;
      return recorded;
    }
    const now = Date.now();
    this.journal?.clock.push(now);
    return now;
  }

  private startCell(): CellOutcome | undefined {
    this.started = true;
    const started = this.vm.start(this.cell.code, this.cell.catalog, this.cell.restartSafe ? this.cell.seed : undefined);
    if (this.abortedNow()) return this.fail({ code: 'aborted', phase: 'host', error: ABORTED_MESSAGE });
    if (started.ok) return undefined;
    if (this.refusal) return this.refuse();
    if (this.vm.timedOut) return this.timeout();
    return this.fail(started.compile ? classifyCompileError(started.record) : classifyGuestError(started.record));
  }

  /**
   * On resume, pending yields resolve (to undefined) before any other settlement. Not journaled:
   * every resumed leg starts so, and a replay of it does the same.
   */
  private releaseYields(): CellOutcome | undefined {
    for (const id of this.ledger.ids('yield')) {
      this.ledger.close(id);
      const thrown = this.vm.settle(id, true, 'null');
      if (thrown) return this.afterThrow(thrown);
    }
    return undefined;
  }

  /** The completion rule (SPEC §3); undefined means: wait for the host. */
  private verdict(idle: boolean): CellOutcome | undefined {
    if (this.divergence) return this.diverged();
    if (this.refusal) return this.refuse();
    // Park only from an idle VM: one still running jobs at its deadline times out.
    if (this.vm.timedOut || !idle) return this.timeout();
    if (this.admission) return this.fail({ code: 'invalid_input', phase: 'guest', error: this.admission });
    const state = this.vm.promiseState();
    if (state === 'rejected') return this.failGuest(this.vm.readRejection());
    if (this.ledger.size === 0)
      return state === 'pending'
        ? this.fail({ code: 'internal_error', phase: 'guest', error: PENDING_WITHOUT_HOST_WORK_MESSAGE })
        : this.complete();
    if (this.queue.length > 0 || this.awaitResults) return undefined;
    if (this.ledger.onlyYields()) return this.park('yield');
    if (this.ledger.onlyParkable()) return this.park('pending_tools');
    return undefined;
  }

  private complete(): CellOutcome {
    const unhandled = this.vm.readUnhandledRejection();
    if (this.vm.timedOut) return this.timeout();
    if (unhandled) return this.failGuest(unhandled);
    const value = this.vm.readValue();
    if (this.refusal) return this.refuse();
    if (this.vm.timedOut) return this.timeout();
    if (!value.ok) return this.failGuest(value.record);
    return { status: 'completed', valueJson: value.json, ...this.common() };
  }

  private park(reason: WaitingOutcome['reason']): CellOutcome {
    const snapshotBytes = this.vm.snapshotBytes();
    if (snapshotBytes > this.cell.limits.maxSnapshotBytes) {
      return this.fail({ code: 'snapshot_limit_exceeded', phase: 'guest', error: SNAPSHOT_LIMIT_MESSAGE });
    }
    const pending = this.ledger.pending(new Set(this.queue.map((settlement) => settlement.id)));
    if (this.journal) {
      const open = this.ledger.openCalls().map(([id]) => id);
      this.journal.open = open;
      // Timers started while the run was parked (as slots freed) are due as well.
      const timers = (this.journal.timers ??= []);
      const listed = new Set(timers.map(([id]) => id));
      for (const id of open) {
        const due = this.timerDue.get(id);
        if (due !== undefined && !listed.has(id)) timers.push([id, due]);
      }
    }
    return { status: 'waiting', reason, pending, snapshotBytes, ...this.common() };
  }

  /** The next queued settlement; 'recheck' when the run's state changed; 'deadline' at `until`. */
  private next(until: number): Promise<Wakeup> {
    const remaining = until - performance.now();
    if (remaining <= 0) return Promise.resolve('deadline');
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.aborted) return Promise.resolve('recheck');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve('deadline');
      }, Math.ceil(remaining));
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve(this.queue.shift() ?? 'recheck');
      };
    });
  }

  output(kind: number, text: string): void {
    // A replay re-runs legs whose output was already returned.
    if (this.replaying) return;
    if (kind === OUT_CONSOLE) {
      this.entries.push(...this.consoleBudget.accept(text));
      return;
    }
    // Bound what the thread holds: past maxOutputBytes (shared by all legs) the result builder cuts anyway.
    if (this.outputBytes > this.cell.limits.maxOutputBytes) return;
    this.outputBytes += Buffer.byteLength(text, 'utf8') + 24;
    if (kind === OUT_TEXT) this.entries.push({ type: 'text', text });
    else if (kind === OUT_JSON) this.entries.push({ type: 'json', value: JSON.parse(text) as unknown });
  }

  request(method: string, argsJson: string): string {
    if (!METHODS.has(method)) throw new BridgeProtocolError(`unknown code mode bridge method ${method}`);
    if (this.cell.restartSafe) this.checkReplaySafe(method, argsJson);
    const bridgeMethod = method as BridgeMethod;
    // SPEC §3: past the in-flight slots requests wait, up to MAX_QUEUED_BRIDGE_REQUESTS; one more
    // fails the cell (sticky: catching the error does not help). A replay re-makes calls the live
    // run admitted, so it is not checked again.
    const maxInFlight = this.cell.limits.maxPendingToolCalls;
    if (
      !this.admission &&
      !this.replaying &&
      method !== 'yield' &&
      this.ledger.inFlight >= maxInFlight &&
      this.ledger.queuedCount >= MAX_QUEUED_BRIDGE_REQUESTS
    ) {
      this.admission = bridgeQueueLimitMessage(maxInFlight);
    }
    if (this.admission) throw new BridgeProtocolError(this.admission);
    // Every request but a yield enters the queue; `flush` starts it at once when a slot is free.
    const id = this.ledger.add(bridgeMethod, argsJson, method !== 'yield');
    if (this.replaying) {
      const recorded = this.replaying.calls[this.replaying.made];
      if (!recorded) return this.divergeInCall(`the replay called ${id} beyond the calls recorded for its leg`);
      if (recorded[0] !== id || recorded[1] !== argsJson)
        return this.divergeInCall(`the replay called ${id} where the log records ${recorded[0]} with other arguments`);
      this.replaying.made += 1;
      return id;
    }
    this.journal?.calls.push([id, argsJson]);
    const recorded = this.cell.replay?.tail[id];
    if (recorded && method === 'callValue') {
      // Made before the worker died and settled in the log: its recorded outcome, not a second call.
      if (!sameCall(argsJson, recorded.tool, recorded.inputJson))
        return this.divergeInCall(`${id} calls a tool or input other than the log records (${recorded.tool})`);
      this.ledger.answer(id);
      this.dispatched = true;
      this.queue.push({ id, ok: recorded.ok, payload: recorded.payload });
      return id;
    }
    if (method === 'yield') {
      // A yield is answered by the next resume; with awaitResults it resolves at once.
      if (this.awaitResults) this.queue.push({ id, ok: true, payload: 'null' });
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
  private flush(): void {
    if (this.replaying || this.admission || this.refusal || this.divergence || this.aborted) return;
    const maxInFlight = this.cell.limits.maxPendingToolCalls;
    while (this.ledger.inFlight < maxInFlight) {
      const next = this.ledger.takeQueued();
      if (!next) return;
      this.send(...next);
    }
  }

  private send(id: string, method: BridgeMethod, argsJson: string): void {
    this.dispatched = true;
    if (method !== 'sleep') {
      this.port.dispatch(id, method, argsJson);
      return;
    }
    // A timer's delay runs from its start (a queued timer waited for its slot first).
    const rearmAt = this.rearm.get(id);
    this.rearm.delete(id);
    const due = rearmAt ?? Date.now() + sleepDelay(argsJson);
    this.timerDue.set(id, due);
    this.journal?.timers?.push([id, due]);
    this.port.dispatch(id, method, rearmAt === undefined ? argsJson : JSON.stringify([Math.max(0, rearmAt - Date.now())]));
  }

  /** Removes a settled or cancelled request; false when it was not open. */
  private closeCall(id: string): boolean {
    this.timerDue.delete(id);
    return this.ledger.close(id);
  }

  /**
   * SPEC §5, restartSafe cells: a call that is not replay-safe is never dispatched. The refusal is
   * recorded here (the guest cannot undo it: the VM is halted, and the run fails at the next check
   * whatever the guest catches); once refused, no later call of the run is dispatched either. As in
   * OpenClaw, the namespace message is used only when every refused call was a namespace call.
   */
  private checkReplaySafe(method: string, argsJson: string): void {
    const refused = this.unsafeKind(method, argsJson);
    if (refused) {
      this.refusal = this.refusal === 'surface' || refused === 'surface' ? 'surface' : 'namespace';
      this.vm.halt();
    }
    if (this.refusal) throw new BridgeProtocolError(this.refusalMessage());
  }

  private unsafeKind(method: string, argsJson: string): Refusal | undefined {
    if (REPLAY_SAFE_METHODS.has(method)) return undefined;
    if (method === 'namespace') return 'namespace';
    if (method === 'callValue' && this.replaySafeTools.has(toolOf(argsJson) ?? '')) return undefined;
    return 'surface';
  }

  private refusalMessage(): string {
    return this.refusal === 'namespace' ? RESTART_SAFE_NAMESPACE_MESSAGE : RESTART_SAFE_SURFACE_MESSAGE;
  }

  /** OpenClaw: `bridge` once anything was dispatched in the run, else `input`. */
  private refuse(): CellOutcome {
    return this.fail({ code: 'invalid_input', phase: this.dispatched ? 'bridge' : 'input', error: this.refusalMessage() });
  }

  /** Guest code threw out of a host-driven call (a settlement, a timer callback). */
  private afterThrow(thrown: GuestErrorRecord): CellOutcome {
    if (this.refusal) return this.refuse();
    return this.vm.timedOut ? this.timeout() : this.failGuest(thrown);
  }

  private failGuest(record: GuestErrorRecord): CellOutcome {
    return this.fail(classifyGuestError(record));
  }

  private timeout(): CellOutcome {
    return this.fail({ code: 'timeout', phase: 'guest', error: TIMEOUT_MESSAGE });
  }

  private fail(failure: Failure): CellOutcome {
    return { status: 'failed', ...failure, ...this.common() };
  }

  /** This leg's output (handed out once) and the run-wide flags. */
  private common() {
    const output = this.entries;
    this.entries = [];
    const journal = this.journal ? { journal: this.journal } : {};
    return { output, consoleTruncated: this.consoleBudget.truncated, bridgeDispatchStarted: this.dispatched, ...journal };
  }

  private engineFailureText(error: SandboxEngineError): string {
    if (this.vm.memoryFull) return 'InternalError: out of memory';
    if (/Maximum call stack size exceeded/.test(error.message)) return STACK_OVERFLOW_TEXT;
    return `InternalError: sandbox engine failure (${error.message})`;
  }
}

import { BRIDGE_METHODS, type BridgeMethod, type CodeModeOutput } from '@codemode/contracts';
import {
  ABORTED_MESSAGE,
  BridgeProtocolError,
  PENDING_WITHOUT_HOST_WORK_MESSAGE,
  RESTART_SAFE_NAMESPACE_MESSAGE,
  RESTART_SAFE_SURFACE_MESSAGE,
  SandboxEngineError,
  SNAPSHOT_LIMIT_MESSAGE,
  TIMEOUT_MESSAGE,
  TOO_MANY_PENDING_MESSAGE,
} from '../errors';
import { OUT_CONSOLE, OUT_JSON, OUT_TEXT } from '../guest/prelude';
import { ConsoleBudget } from '../result';
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

  /** Queues a host settlement; it is applied between pumps, in arrival order. */
  settleLater(settlement: Settlement): void {
    this.queue.push(settlement);
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
    const first = this.started ? this.releaseYields() : this.startCell();
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
      if (next === 'recheck' || !this.ledger.close(next.id)) continue;
      const thrown = this.vm.settle(next.id, next.ok, next.payload);
      if (thrown) return this.afterThrow(thrown);
    }
  }

  private abortedNow(): boolean {
    if (this.port.abortRequested()) this.aborted = true;
    return this.aborted;
  }

  private startCell(): CellOutcome | undefined {
    this.started = true;
    const started = this.vm.start(this.cell.code, this.cell.catalog);
    if (this.abortedNow()) return this.fail({ code: 'aborted', phase: 'host', error: ABORTED_MESSAGE });
    if (started.ok) return undefined;
    if (this.refusal) return this.refuse();
    if (this.vm.timedOut) return this.timeout();
    return this.fail(started.compile ? classifyCompileError(started.record) : classifyGuestError(started.record));
  }

  /** On resume, pending yields resolve (to undefined) before any other settlement. */
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
    if (this.refusal) return this.refuse();
    // Park only from an idle VM: one still running jobs at its deadline times out.
    if (this.vm.timedOut || !idle) return this.timeout();
    if (this.admission) return this.fail({ code: 'invalid_input', phase: 'guest', error: this.admission });
    const state = this.vm.promiseState();
    if (state === 'rejected') return this.failGuest(this.vm.readRejection());
    if (this.ledger.size === 0) return state === 'pending' ? this.fail({ code: 'internal_error', phase: 'guest', error: PENDING_WITHOUT_HOST_WORK_MESSAGE }) : this.complete();
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
    if (!this.admission && this.ledger.size >= this.cell.limits.maxPendingToolCalls) {
      this.admission = TOO_MANY_PENDING_MESSAGE;
    }
    if (this.admission) throw new BridgeProtocolError(this.admission);
    const id = this.ledger.add(method as BridgeMethod, argsJson);
    if (method === 'yield') {
      // A yield is answered by the next resume; with awaitResults it resolves at once.
      if (this.awaitResults) this.queue.push({ id, ok: true, payload: 'null' });
      return id;
    }
    this.dispatched = true;
    this.port.dispatch(id, method as BridgeMethod, argsJson);
    return id;
  }

  cancel(id: string): void {
    if (this.ledger.close(id)) this.port.cancel(id);
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
    return { output, consoleTruncated: this.consoleBudget.truncated, bridgeDispatchStarted: this.dispatched };
  }

  private engineFailureText(error: SandboxEngineError): string {
    if (this.vm.memoryFull) return 'InternalError: out of memory';
    if (/Maximum call stack size exceeded/.test(error.message)) return 'InternalError: stack overflow';
    return `InternalError: sandbox engine failure (${error.message})`;
  }
}

/** The `tool` of a `callValue` request's args (`{tool, input}`), if readable. */
function toolOf(argsJson: string): string | undefined {
  try {
    const args = JSON.parse(argsJson) as { tool?: unknown } | null;
    return args !== null && typeof args === 'object' && typeof args.tool === 'string' ? args.tool : undefined;
  } catch {
    return undefined;
  }
}

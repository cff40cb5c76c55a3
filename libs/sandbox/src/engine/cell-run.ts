import { BRIDGE_METHODS, type BridgeMethod, type CodeModeOutput } from '@codemode/contracts';
import {
  BridgeProtocolError,
  PENDING_WITHOUT_HOST_WORK_MESSAGE,
  SandboxEngineError,
  TIMEOUT_MESSAGE,
  TOO_MANY_PENDING_MESSAGE,
} from '../errors';
import { OUT_CONSOLE, OUT_JSON, OUT_TEXT } from '../guest/prelude';
import { ConsoleBudget } from '../result';
import type { CellVm, VmHostSink } from './cell-vm';
import { classifyCompileError, classifyGuestError, type Failure, type GuestErrorRecord } from './guest-error';
import type { CellOutcome, CellRunRequest } from './types';

/** Jobs run per `executePendingJobs` call; the deadline is checked between batches. */
export const JOB_BATCH = 2000;

/** Where the run sends bridge traffic (in a thread: a message to the pool in the main thread). */
export interface BridgePort {
  dispatch(id: string, method: BridgeMethod, argsJson: string): void;
  cancel(id: string): void;
}

/** The host's answer to one bridge request; `payload` is JSON (the value, or `{name,message}`). */
export interface Settlement {
  id: string;
  ok: boolean;
  payload: string;
}

const METHODS: ReadonlySet<string> = new Set(BRIDGE_METHODS);

/**
 * Drives one cell on one VM: pump jobs, check the completion rule, sleep until the host settles a
 * bridge request, repeat. The VM is idle while it waits. Kept separate from the thread so a later
 * issue can park the VM between calls instead of failing at the deadline.
 */
export class CellRun implements VmHostSink {
  private readonly outstanding = new Set<string>();
  private readonly counters = new Map<string, number>();
  private readonly queue: Settlement[] = [];
  private wake: (() => void) | undefined;
  private readonly entries: CodeModeOutput[] = [];
  private readonly consoleBudget = new ConsoleBudget();
  private outputBytes = 0;
  private dispatched = false;
  private admission: string | undefined;
  private readonly deadline: number;

  constructor(
    private readonly vm: CellVm,
    private readonly cell: CellRunRequest,
    private readonly port: BridgePort,
    startedAt: number = performance.now(),
  ) {
    this.deadline = startedAt + cell.limits.timeoutMs;
  }

  /** Queues a host settlement; it is applied between pumps, in arrival order. */
  settleLater(settlement: Settlement): void {
    this.queue.push(settlement);
    this.wake?.();
  }

  async execute(): Promise<CellOutcome> {
    this.vm.bind(this, this.deadline);
    try {
      return await this.drive();
    } catch (error) {
      if (!(error instanceof SandboxEngineError)) throw error;
      return this.fail({ code: 'internal_error', phase: 'guest', error: this.engineFailureText(error) });
    }
  }

  private async drive(): Promise<CellOutcome> {
    const started = this.vm.start(this.cell.code);
    if (!started.ok) {
      if (this.vm.timedOut) return this.timeout();
      return this.fail(started.compile ? classifyCompileError(started.record) : classifyGuestError(started.record));
    }
    for (;;) {
      this.vm.pump(JOB_BATCH);
      const verdict = this.verdict();
      if (verdict) return verdict;
      const next = await this.nextSettlement();
      if (!next) return this.timeout();
      if (!this.outstanding.delete(next.id)) continue;
      const thrown = this.vm.settle(next.id, next.ok, next.payload);
      if (thrown) return this.vm.timedOut ? this.timeout() : this.failGuest(thrown);
    }
  }

  /** The completion rule (SPEC §3); undefined means: wait for the host. */
  private verdict(): CellOutcome | undefined {
    if (this.vm.timedOut || performance.now() >= this.deadline) return this.timeout();
    if (this.admission) return this.fail({ code: 'invalid_input', phase: 'guest', error: this.admission });
    const state = this.vm.promiseState();
    if (state === 'rejected') return this.failGuest(this.vm.readRejection());
    if (this.outstanding.size > 0) return undefined;
    if (state === 'pending') {
      return this.fail({ code: 'internal_error', phase: 'guest', error: PENDING_WITHOUT_HOST_WORK_MESSAGE });
    }
    const value = this.vm.readValue();
    if (this.vm.timedOut) return this.timeout();
    if (!value.ok) return this.failGuest(value.record);
    return { status: 'completed', valueJson: value.json, ...this.common() };
  }

  private nextSettlement(): Promise<Settlement | undefined> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    const remaining = this.deadline - performance.now();
    if (remaining <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve(undefined);
      }, Math.ceil(remaining));
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve(this.queue.shift());
      };
    });
  }

  output(kind: number, text: string): void {
    if (kind === OUT_CONSOLE) {
      this.entries.push(...this.consoleBudget.accept(text));
      return;
    }
    // Bound what the thread holds: past maxOutputBytes the result builder cuts anyway.
    if (this.outputBytes > this.cell.limits.maxOutputBytes) return;
    this.outputBytes += Buffer.byteLength(text, 'utf8') + 24;
    if (kind === OUT_TEXT) this.entries.push({ type: 'text', text });
    else if (kind === OUT_JSON) this.entries.push({ type: 'json', value: JSON.parse(text) as unknown });
  }

  request(method: string, argsJson: string): string {
    if (!METHODS.has(method)) throw new BridgeProtocolError(`unknown code mode bridge method ${method}`);
    if (!this.admission && this.outstanding.size >= this.cell.limits.maxPendingToolCalls) {
      this.admission = TOO_MANY_PENDING_MESSAGE;
    }
    if (this.admission) throw new BridgeProtocolError(this.admission);
    const n = (this.counters.get(method) ?? 0) + 1;
    this.counters.set(method, n);
    const id = `bridge:${method}:${n}`;
    this.outstanding.add(id);
    this.dispatched = true;
    this.port.dispatch(id, method as BridgeMethod, argsJson);
    return id;
  }

  cancel(id: string): void {
    if (this.outstanding.delete(id)) this.port.cancel(id);
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

  private common() {
    return { output: this.entries, consoleTruncated: this.consoleBudget.truncated, bridgeDispatchStarted: this.dispatched };
  }

  private engineFailureText(error: SandboxEngineError): string {
    if (this.vm.memoryFull) return 'InternalError: out of memory';
    if (/Maximum call stack size exceeded/.test(error.message)) return 'InternalError: stack overflow';
    return `InternalError: sandbox engine failure (${error.message})`;
  }
}

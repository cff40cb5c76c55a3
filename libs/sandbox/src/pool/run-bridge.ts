import type { BridgeMethod } from '@codemode/contracts';
import type { BridgeHost, CallGate, ExternalSettlement } from '../engine/types';
import { BridgeUnavailableError } from '../errors';

export type SettleFn = (id: string, ok: boolean, payload: string) => void;

/**
 * Main-thread side of one run's bridge, for the whole run (every leg, and while parked): `sleep`
 * is a host timer (cancellable), a call the host says only the platform answers waits for
 * `settleExternal`, every other method goes to the BridgeHost of the leg that made it.
 * Settlements go back through `settle` as JSON; nothing is sent after `close()` (the run ended or
 * was discarded), and closing aborts the host's signal and clears every timer.
 */
export class RunBridge {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly platformCalls = new Set<string>();
  /** Held calls approved and waiting for their slot (`CallGate.resume`), by id. */
  private readonly admissions = new Map<string, () => void>();
  /** Made at the first dispatch: aborting one creates a DOMException (a stack capture, ~2 % of a
   * worker's main thread at one per exec), which a run that called nothing need not pay. */
  private abort: AbortController | undefined;
  private awaitResults = false;
  private closed = false;
  dispatchStarted = false;
  /**
   * Calls the host is working on, not yet settled. A call held for an approval, or handed to the
   * platform, leaves it: all it waits on is a record in Redis, so the run may leave memory for its
   * image (SPEC §10 "Parked memory") and the call is made again where it is restored.
   */
  private readonly working = new Set<string>();
  /** Requests waiting for the run's claim (`BridgeHost.beforeDispatch`): the host has them in hand too. */
  private readonly gated = new Set<string>();

  constructor(
    private host: BridgeHost | undefined,
    private settle: SettleFn,
    private onPlatformCall: (id: string) => void = () => undefined,
    /** A call steps aside for a decision (`held`), or was approved and wants its slot back. */
    private onHold: (id: string, held: boolean) => void = () => undefined,
  ) {}

  /** SPEC §10: the run moved to another thread (rescued); calls in progress settle there. */
  rewire(settle: SettleFn, onPlatformCall: (id: string) => void, onHold: (id: string, held: boolean) => void): void {
    this.settle = settle;
    this.onPlatformCall = onPlatformCall;
    this.onHold = onHold;
  }

  /** Starts a leg: calls it makes go to `host` (kept from the last leg when undefined). */
  beginLeg(host: BridgeHost | undefined, awaitResults: boolean): void {
    if (host) this.host = host;
    this.awaitResults = awaitResults;
  }

  dispatch(id: string, method: BridgeMethod, argsJson: string, callNumber?: number): void {
    if (this.closed) return;
    this.dispatchStarted = true;
    // SPEC §13: a cell started before its run was claimed makes no request (a timer included)
    // until the claim is written; the requests made meanwhile go on in their order.
    const claim = this.host?.beforeDispatch?.();
    if (!claim) return this.dispatchNow(id, method, argsJson, callNumber);
    this.gated.add(id);
    claim.then(
      () => {
        if (this.gated.delete(id) && !this.closed) this.dispatchNow(id, method, argsJson, callNumber);
      },
      (error: unknown) => {
        if (this.gated.delete(id)) this.send(id, false, errorJson(error));
      },
    );
  }

  private dispatchNow(id: string, method: BridgeMethod, argsJson: string, callNumber?: number): void {
    const args = parseArgs(argsJson);
    const call = callNumber === undefined ? { id, method, args } : { id, method, args, callNumber };
    if (!this.awaitResults && method !== 'sleep' && this.host?.answeredByPlatform?.(call)) {
      this.platformCalls.add(id);
      this.onPlatformCall(id);
      // The host still sees the call (to record and count it); only `settle` answers it.
      this.host.dispatch(call, this.signal()).catch(() => undefined);
      return;
    }
    if (method === 'sleep') {
      const delay = Array.isArray(args) && typeof args[0] === 'number' && Number.isFinite(args[0]) ? Math.max(0, args[0]) : 0;
      // A rescued run re-arms its timers with what is left: the old timer goes.
      clearTimeout(this.timers.get(id));
      const timer = setTimeout(() => {
        this.timers.delete(id);
        this.send(id, true, 'null');
      }, delay);
      this.timers.set(id, timer);
      return;
    }
    // Before the host sees it: the host may hold the call at once.
    this.working.add(id);
    const pending = this.host ? this.host.dispatch(call, this.signal(), this.gate(id)) : Promise.reject(new BridgeUnavailableError(method));
    pending.then(
      (value) => {
        this.working.delete(id);
        const json = toJson(value);
        if (json === undefined) this.send(id, false, errorJson(new TypeError('bridge result is not JSON-serializable')));
        else this.send(id, true, json);
      },
      (error: unknown) => {
        this.working.delete(id);
        this.send(id, false, errorJson(error));
      },
    );
  }

  /** Calls the host is working on (see `working`). */
  get hostCallsInFlight(): number {
    return this.working.size + this.gated.size;
  }

  /** A held call holds a slot again (the thread admitted it): its host goes on. */
  admitted(id: string): void {
    const resume = this.admissions.get(id);
    this.admissions.delete(id);
    resume?.();
  }

  /** The run was rebuilt from its log: tells the host, whose waiting caller gets a fresh budget. */
  replayed(): void {
    if (!this.closed) this.host?.replayed?.();
  }

  /** A restored parked run's in-flight call that still waits for the platform (SPEC §12): only `settleExternal` answers it. */
  awaitPlatform(id: string): void {
    if (!this.closed) this.platformCalls.add(id);
  }

  /** The unsettled calls only the platform answers. */
  platformPending(): string[] {
    return this.closed ? [] : [...this.platformCalls];
  }

  /** `id` is an unsettled call only the platform answers. */
  awaitsPlatform(id: string): boolean {
    return !this.closed && this.platformCalls.has(id);
  }

  /** The platform's answer to a call it alone answers; false when `id` is not such an unsettled call. */
  settleExternal(id: string, result: ExternalSettlement): boolean {
    if (this.closed || !this.platformCalls.delete(id)) return false;
    if (!result.ok) {
      this.send(id, false, JSON.stringify({ name: result.error.name ?? 'Error', message: result.error.message }));
      return true;
    }
    const json = toJson(result.value);
    if (json === undefined) this.send(id, false, errorJson(new TypeError('bridge result is not JSON-serializable')));
    else this.send(id, true, json);
    return true;
  }

  cancel(id: string): void {
    this.gated.delete(id);
    this.platformCalls.delete(id);
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  close(): void {
    this.closed = true;
    this.gated.clear();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.platformCalls.clear();
    // Approved calls waiting for their slot go on to see the abort below and give up, rather than
    // wait forever.
    for (const admit of this.admissions.values()) admit();
    this.admissions.clear();
    this.abort?.abort();
  }

  /** The signal every dispatch of this run gets, aborted by `close`. */
  private signal(): AbortSignal {
    this.abort ??= new AbortController();
    return this.abort.signal;
  }

  /** What the host may do with call `id` while it waits for a decision (SPEC §11). */
  private gate(id: string): CallGate {
    return {
      hold: () => {
        if (this.closed) return;
        this.working.delete(id);
        this.onHold(id, true);
      },
      resume: () =>
        new Promise<void>((resolve) => {
          if (this.closed) return resolve();
          this.working.add(id);
          this.admissions.set(id, resolve);
          this.onHold(id, false);
        }),
      handToPlatform: () => {
        if (this.closed) return;
        this.working.delete(id);
        this.platformCalls.add(id);
        this.onPlatformCall(id);
      },
    };
  }

  private send(id: string, ok: boolean, payload: string): void {
    if (!this.closed) this.settle(id, ok, payload);
  }
}

function parseArgs(argsJson: string): unknown {
  try {
    return JSON.parse(argsJson) as unknown;
  } catch {
    return [];
  }
}

function toJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return undefined;
  }
}

function errorJson(error: unknown): string {
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  return JSON.stringify({ name, message });
}

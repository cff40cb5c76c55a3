import type { BridgeMethod } from '@codemode/contracts';
import { MAX_QUEUED_BRIDGE_REQUESTS, type PendingCall } from '@codemode/cells';

interface OpenCall {
  method: BridgeMethod;
  argsJson: string;
  /** Waiting in the bridge queue for an in-flight slot: not dispatched yet (SPEC §3). */
  queued: boolean;
  /** Its settlement has reached the run (applied later, between pumps): it holds no slot any more. */
  answered: boolean;
  /** Only the platform answers it (`BridgeHost.answeredByPlatform`); it never settles by itself. */
  platform: boolean;
  /** Stepped aside for a decision (SPEC §11, `CallGate.hold`): dispatched, but it holds no slot. */
  held: boolean;
  /** Queued again after its decision: taking it admits it to its host (it was dispatched already). */
  readmit: boolean;
  /** The n of a tool call's callKey (SPEC §16); 0 for other requests. */
  callNumber: number;
}

/** Requests that are nested tool calls, numbered together for their callKey (SPEC §16). */
const TOOL_CALL_METHODS: ReadonlySet<BridgeMethod> = new Set<BridgeMethod>(['callValue', 'namespace']);

/**
 * A ledger as plain data (a parked run's image): open requests in request order as
 * `[id, method, argsJson, queued, platform, callNumber]`, the per-method id counters and the
 * count of tool calls made.
 */
export interface LedgerState {
  calls: [string, BridgeMethod, string, boolean, boolean, number][];
  counters: [string, number][];
  toolCalls: number;
}

/**
 * The unsettled bridge requests of one run, across all its legs, in request order, and the bridge
 * queue (SPEC §3): a request holds an in-flight slot from its dispatch until its settlement
 * reaches the run; requests made while every slot is taken wait, in order, unsent. Yields hold
 * no slot (they are answered by a resume, never dispatched). Ids are `bridge:<method>:<n>` with n
 * counting from 1 per method within the run (OpenClaw's per-method counters: a call's id does
 * not depend on unrelated bridge traffic), assigned when the request is made, queued or not.
 * Tool calls (callValue, namespace) are also numbered together, in the order the guest made them,
 * for their callKey (SPEC §16): a replay re-makes them in that order, so they get the same numbers.
 */
export class BridgeLedger {
  private readonly open = new Map<string, OpenCall>();
  private readonly counters = new Map<string, number>();
  private toolCalls = 0;
  /** Queued request ids, oldest first. */
  private readonly waiting: string[] = [];
  private flying = 0;

  get size(): number {
    return this.open.size;
  }

  /** Requests holding an in-flight slot: dispatched (or held for the platform), not yet answered. */
  get inFlight(): number {
    return this.flying;
  }

  /** Every slot is taken and the bridge queue holds its maximum: the next request is refused (SPEC §3). */
  full(maxInFlight: number): boolean {
    return this.flying >= maxInFlight && this.waiting.length >= MAX_QUEUED_BRIDGE_REQUESTS;
  }

  /** Records a request; `queued` ones wait for `takeQueued`, others take a slot now (yields never do). */
  add(method: BridgeMethod, argsJson: string, queued: boolean): string {
    const n = (this.counters.get(method) ?? 0) + 1;
    this.counters.set(method, n);
    const id = `bridge:${method}:${n}`;
    const callNumber = TOOL_CALL_METHODS.has(method) ? ++this.toolCalls : 0;
    this.open.set(id, { method, argsJson, queued, answered: false, platform: false, held: false, readmit: false, callNumber });
    if (queued) this.waiting.push(id);
    else if (method !== 'yield') this.flying += 1;
    return id;
  }

  /**
   * The oldest queued request, now holding a slot: `[id, method, argsJson, readmit]`; `readmit`:
   * a held call whose host waits for the slot (not a new dispatch).
   */
  takeQueued(): [string, BridgeMethod, string, boolean] | undefined {
    const id = this.waiting.shift();
    const call = id === undefined ? undefined : this.open.get(id);
    if (id === undefined || !call) return undefined;
    call.queued = false;
    if (call.method !== 'yield') this.flying += 1;
    const readmit = call.readmit;
    call.readmit = false;
    return [id, call.method, call.argsJson, readmit];
  }

  /** The dispatched call steps aside for a decision: its slot is free (false when it holds none). */
  hold(id: string): boolean {
    const call = this.open.get(id);
    if (!call || call.held || call.queued || call.answered || call.method === 'yield') return false;
    call.held = true;
    this.flying -= 1;
    return true;
  }

  /** The held call was approved: it waits at the head of the queue for a slot (false when it was not held). */
  unhold(id: string): boolean {
    const call = this.open.get(id);
    if (!call?.held || call.answered) return false;
    call.held = false;
    call.queued = true;
    call.readmit = true;
    this.waiting.unshift(id);
    return true;
  }

  /** The n of an open tool call's callKey (SPEC §16); undefined for other requests. */
  callNumber(id: string): number | undefined {
    return this.open.get(id)?.callNumber || undefined;
  }

  isQueued(id: string): boolean {
    return this.open.get(id)?.queued === true;
  }

  /** Its settlement reached the run: the slot is free (the request stays open until applied). */
  answer(id: string): boolean {
    const call = this.open.get(id);
    if (!call || call.answered) return false;
    this.unqueue(id, call);
    call.answered = true;
    return true;
  }

  /** Removes a request (settled or cancelled); false when it was not open. */
  close(id: string): boolean {
    const call = this.open.get(id);
    if (!call) return false;
    this.unqueue(id, call);
    this.open.delete(id);
    return true;
  }

  markPlatform(id: string): boolean {
    const call = this.open.get(id);
    if (!call) return false;
    call.platform = true;
    return true;
  }

  ids(method: BridgeMethod): string[] {
    return [...this.open].filter(([, call]) => call.method === method).map(([id]) => id);
  }

  /** Every open request, in request order: `[id, method, argsJson]`. */
  openCalls(): [string, BridgeMethod, string][] {
    return [...this.open].map(([id, call]) => [id, call.method, call.argsJson]);
  }

  /** The ids of every open request, in request order. */
  openIds(): string[] {
    return [...this.open.keys()];
  }

  /** Every open request is a yield (SPEC §3: only then the reason is `yield`). */
  onlyYields(): boolean {
    for (const call of this.open.values()) if (call.method !== 'yield') return false;
    return this.open.size > 0;
  }

  /**
   * Every request that is not queued waits for the platform or a resume: running out the budget
   * gains nothing (SPEC §3: such a cell parks at once, even with calls queued behind them).
   */
  onlyParkable(): boolean {
    // Checked at every wait: one pass, no copies. Held calls wait for a decision like the rest;
    // alone they stop the clock instead (onlyHeld).
    let parkable = false;
    for (const call of this.open.values()) {
      if (call.queued) continue;
      if (call.method === 'yield' || call.platform) parkable = true;
      else if (!call.held) return false;
    }
    return parkable;
  }

  /** Every unsettled request waits for a decision (SPEC §11): the run's budget clock stops. */
  onlyHeld(): boolean {
    let held = false;
    for (const call of this.open.values()) {
      if (call.answered) continue;
      if (!call.held) return false;
      held = true;
    }
    return held;
  }

  /** Open requests (queued ones included), minus those whose settlement is already queued. */
  pending(settled: ReadonlySet<string>): PendingCall[] {
    const calls: PendingCall[] = [];
    for (const [id, call] of this.open) {
      if (!settled.has(id)) calls.push({ id, method: call.method, args: parseArgs(call.argsJson) });
    }
    return calls;
  }

  /** The ledger of a parked run (no settlement is waiting to be applied then). */
  state(): LedgerState {
    return {
      calls: [...this.open].map(([id, call]) => [id, call.method, call.argsJson, call.queued, call.platform, call.callNumber]),
      counters: [...this.counters],
      toolCalls: this.toolCalls,
    };
  }

  /** Fills this empty ledger from a parked run's image: same ids, queue order and slots. */
  load(state: LedgerState): void {
    for (const [method, n] of state.counters) this.counters.set(method, n);
    this.toolCalls = state.toolCalls;
    for (const [id, method, argsJson, queued, platform, callNumber] of state.calls) {
      this.open.set(id, { method, argsJson, queued, answered: false, platform, held: false, readmit: false, callNumber });
      if (queued) this.waiting.push(id);
      else if (method !== 'yield') this.flying += 1;
    }
  }

  /** Takes a request off the queue or frees its slot, whichever it holds. */
  private unqueue(id: string, call: OpenCall): void {
    if (call.answered) return;
    if (call.queued) {
      const at = this.waiting.indexOf(id);
      if (at >= 0) this.waiting.splice(at, 1);
      call.queued = false;
    } else if (call.method !== 'yield' && !call.held) {
      this.flying -= 1;
    }
  }
}

function parseArgs(argsJson: string): unknown {
  try {
    return JSON.parse(argsJson) as unknown;
  } catch {
    return [];
  }
}

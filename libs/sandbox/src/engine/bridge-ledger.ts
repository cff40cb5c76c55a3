import type { BridgeMethod } from '@codemode/contracts';
import { MAX_QUEUED_BRIDGE_REQUESTS } from '../errors';
import type { PendingCall } from './types';

interface OpenCall {
  method: BridgeMethod;
  argsJson: string;
  /** Waiting in the bridge queue for an in-flight slot: not dispatched yet (SPEC §3). */
  queued: boolean;
  /** Its settlement has reached the run (applied later, between pumps): it holds no slot any more. */
  answered: boolean;
  /** Only the platform answers it (`BridgeHost.answeredByPlatform`); it never settles by itself. */
  platform: boolean;
}

/**
 * The unsettled bridge requests of one run, across all its legs, in request order, and the bridge
 * queue (SPEC §3): a request holds an in-flight slot from its dispatch until its settlement
 * reaches the run; requests made while every slot is taken wait, in order, unsent. Yields hold
 * no slot (they are answered by a resume, never dispatched). Ids are `bridge:<method>:<n>` with n
 * counting from 1 per method within the run (OpenClaw's per-method counters: a call's id does
 * not depend on unrelated bridge traffic), assigned when the request is made, queued or not.
 */
export class BridgeLedger {
  private readonly open = new Map<string, OpenCall>();
  private readonly counters = new Map<string, number>();
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
    this.open.set(id, { method, argsJson, queued, answered: false, platform: false });
    if (queued) this.waiting.push(id);
    else if (method !== 'yield') this.flying += 1;
    return id;
  }

  /** The oldest queued request, now holding a slot: `[id, method, argsJson]`. */
  takeQueued(): [string, BridgeMethod, string] | undefined {
    const id = this.waiting.shift();
    const call = id === undefined ? undefined : this.open.get(id);
    if (id === undefined || !call) return undefined;
    call.queued = false;
    if (call.method !== 'yield') this.flying += 1;
    return [id, call.method, call.argsJson];
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
    return this.open.size > 0 && [...this.open.values()].every((call) => call.method === 'yield');
  }

  /**
   * Every request that is not queued waits for the platform or a resume: running out the budget
   * gains nothing (SPEC §3: such a cell parks at once, even with calls queued behind them).
   */
  onlyParkable(): boolean {
    const active = [...this.open.values()].filter((call) => !call.queued);
    return active.length > 0 && active.every((call) => call.method === 'yield' || call.platform);
  }

  /** Open requests (queued ones included), minus those whose settlement is already queued. */
  pending(settled: ReadonlySet<string>): PendingCall[] {
    const calls: PendingCall[] = [];
    for (const [id, call] of this.open) {
      if (!settled.has(id)) calls.push({ id, method: call.method, args: parseArgs(call.argsJson) });
    }
    return calls;
  }

  /** Takes a request off the queue or frees its slot, whichever it holds. */
  private unqueue(id: string, call: OpenCall): void {
    if (call.answered) return;
    if (call.queued) {
      const at = this.waiting.indexOf(id);
      if (at >= 0) this.waiting.splice(at, 1);
      call.queued = false;
    } else if (call.method !== 'yield') {
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

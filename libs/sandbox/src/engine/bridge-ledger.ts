import type { BridgeMethod } from '@codemode/contracts';
import type { PendingCall } from './types';

interface OpenCall {
  method: BridgeMethod;
  argsJson: string;
  /** Only the platform answers it (`BridgeHost.answeredByPlatform`); it never settles by itself. */
  platform: boolean;
}

/**
 * The unsettled bridge requests of one run, across all its legs, in request order. Ids are
 * `bridge:<method>:<n>` with n counting from 1 per method within the run (OpenClaw's per-method
 * counters: a call's id does not depend on unrelated bridge traffic).
 */
export class BridgeLedger {
  private readonly open = new Map<string, OpenCall>();
  private readonly counters = new Map<string, number>();

  get size(): number {
    return this.open.size;
  }

  add(method: BridgeMethod, argsJson: string): string {
    const n = (this.counters.get(method) ?? 0) + 1;
    this.counters.set(method, n);
    const id = `bridge:${method}:${n}`;
    this.open.set(id, { method, argsJson, platform: false });
    return id;
  }

  /** Removes a request (settled or cancelled); false when it was not open. */
  close(id: string): boolean {
    return this.open.delete(id);
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

  /** Every open request is a yield (SPEC §3: only then the reason is `yield`). */
  onlyYields(): boolean {
    return this.open.size > 0 && [...this.open.values()].every((call) => call.method === 'yield');
  }

  /** Every open request waits for the platform or a resume: running out the budget gains nothing. */
  onlyParkable(): boolean {
    return this.open.size > 0 && [...this.open.values()].every((call) => call.method === 'yield' || call.platform);
  }

  /** Open requests, minus those whose settlement is already queued. */
  pending(settled: ReadonlySet<string>): PendingCall[] {
    const calls: PendingCall[] = [];
    for (const [id, call] of this.open) {
      if (!settled.has(id)) calls.push({ id, method: call.method, args: parseArgs(call.argsJson) });
    }
    return calls;
  }
}

function parseArgs(argsJson: string): unknown {
  try {
    return JSON.parse(argsJson) as unknown;
  } catch {
    return [];
  }
}

import type { BridgeMethod } from '@codemode/contracts';
import type { BridgeHost } from '../engine/types';
import { BridgeUnavailableError } from '../errors';

export type SettleFn = (id: string, ok: boolean, payload: string) => void;

/**
 * Main-thread side of one run's bridge: `sleep` is a host timer (cancellable), every other method
 * goes to the run's BridgeHost. Settlements go back through `settle` as JSON; nothing is sent
 * after `close()` (the run ended), and closing aborts the host's signal and clears every timer.
 */
export class RunBridge {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly abort = new AbortController();
  private closed = false;
  dispatchStarted = false;

  constructor(
    private readonly host: BridgeHost | undefined,
    private readonly settle: SettleFn,
  ) {}

  dispatch(id: string, method: BridgeMethod, argsJson: string): void {
    if (this.closed) return;
    this.dispatchStarted = true;
    const args = parseArgs(argsJson);
    if (method === 'sleep') {
      const delay = Array.isArray(args) && typeof args[0] === 'number' && Number.isFinite(args[0]) ? Math.max(0, args[0]) : 0;
      const timer = setTimeout(() => {
        this.timers.delete(id);
        this.send(id, true, 'null');
      }, delay);
      this.timers.set(id, timer);
      return;
    }
    const pending = this.host
      ? this.host.dispatch({ id, method, args }, this.abort.signal)
      : Promise.reject(new BridgeUnavailableError(method));
    pending.then(
      (value) => {
        const json = toJson(value);
        if (json === undefined) this.send(id, false, errorJson(new TypeError('bridge result is not JSON-serializable')));
        else this.send(id, true, json);
      },
      (error: unknown) => this.send(id, false, errorJson(error)),
    );
  }

  cancel(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.abort.abort();
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

import { Worker } from 'node:worker_threads';
import type { BridgeHost, CellOutcome, CellRunRequest, SandboxVariant } from '../engine/types';
import { SandboxStartError, TIMEOUT_MESSAGE } from '../errors';
import type { FromThread, ThreadData, ToThread } from '../thread/protocol';
import { RunBridge } from './run-bridge';

/** V8 stack of a cell thread. Parser recursion needs ~25× QuickJS's 512 KiB limit; keep 2× margin. */
export const SANDBOX_THREAD_STACK_MB = 32;

export type ThreadState = 'starting' | 'idle' | 'busy' | 'dead';
export type PoolLogger = (level: 'info' | 'warn' | 'error', msg: string, fields?: object) => void;

export interface PoolThreadEvents {
  idle(thread: PoolThread): void;
  dead(thread: PoolThread, beforeReady: boolean): void;
  log: PoolLogger;
}

interface ActiveRun {
  runId: string;
  bridge: RunBridge;
  watchdog: NodeJS.Timeout;
  resolve(outcome: CellOutcome): void;
}

/**
 * One worker thread seen from the pool. Runs one cell at a time; a watchdog terminates the
 * thread when a run is still busy `graceMs` after its deadline (a native builtin ignoring the
 * interrupt handler), fails that run with `timeout`, and reports the thread dead for replacement.
 */
export class PoolThread {
  state: ThreadState = 'starting';
  /** Its next VM is prepared, so a run posted now starts without waiting for instance creation. */
  warm = false;
  readonly ready: Promise<{ compileMs: number; instanceMs: number; spawnMs: number }>;
  private active: ActiveRun | undefined;
  private readonly worker: Worker;
  private readyReject: ((error: Error) => void) | undefined;

  constructor(
    script: string,
    variant: SandboxVariant,
    private readonly graceMs: number,
    private readonly events: PoolThreadEvents,
  ) {
    const spawnedAt = performance.now();
    const workerData: ThreadData = { variant };
    this.worker = new Worker(script, { workerData, resourceLimits: { stackSizeMb: SANDBOX_THREAD_STACK_MB } });
    this.ready = new Promise((resolve, reject) => {
      this.readyReject = reject;
      this.worker.on('message', (message: FromThread) => {
        if (message.type !== 'ready') return this.onMessage(message);
        this.state = 'idle';
        this.readyReject = undefined;
        this.warm = true;
        resolve({ compileMs: message.compileMs, instanceMs: message.instanceMs, spawnMs: performance.now() - spawnedAt });
        this.events.idle(this);
      });
    });
    this.ready.catch(() => undefined);
    this.worker.on('error', (error) => this.events.log('error', 'sandbox thread error', { error: String(error) }));
    this.worker.on('exit', (exitCode) => this.onExit(exitCode));
  }

  run(request: CellRunRequest, host: BridgeHost | undefined): Promise<CellOutcome> {
    if (this.state !== 'idle') throw new SandboxStartError(`sandbox thread is ${this.state}, not idle`);
    this.state = 'busy';
    this.warm = false;
    return new Promise((resolve) => {
      const bridge = new RunBridge(host, (id, ok, payload) =>
        this.post({ type: 'settle', runId: request.runId, id, ok, payload }),
      );
      const watchdog = setTimeout(() => this.onOverrun(), request.limits.timeoutMs + this.graceMs);
      this.active = { runId: request.runId, bridge, watchdog, resolve };
      this.post({ type: 'run', request });
    });
  }

  async terminate(): Promise<void> {
    const dispatched = this.active?.bridge.dispatchStarted ?? false;
    this.finish(failedOutcome('runtime_unavailable', 'host', 'code mode sandbox pool closed', dispatched));
    this.state = 'dead';
    await this.worker.terminate();
  }

  private onMessage(message: Exclude<FromThread, { type: 'ready' }>): void {
    if (message.type === 'log') return this.events.log(message.level, message.msg, message.fields);
    if (message.type === 'warm') {
      this.warm = true;
      return this.events.idle(this);
    }
    const active = this.active;
    if (!active || message.runId !== active.runId) return;
    if (message.type === 'bridge') active.bridge.dispatch(message.id, message.method, message.argsJson);
    else if (message.type === 'cancel') active.bridge.cancel(message.id);
    else if (message.type === 'done') {
      this.finish(message.outcome);
      this.state = 'idle';
      this.events.idle(this);
    }
  }

  private onOverrun(): void {
    const active = this.active;
    if (!active) return;
    this.events.log('warn', 'sandbox thread overran its deadline; terminating it', { runId: active.runId });
    this.finish(failedOutcome('timeout', 'guest', TIMEOUT_MESSAGE, active.bridge.dispatchStarted));
    this.state = 'dead';
    void this.worker.terminate();
  }

  private onExit(exitCode: number): void {
    const wasReady = this.readyReject === undefined;
    this.readyReject?.(new SandboxStartError(`sandbox thread exited with code ${exitCode} before it was ready`));
    const active = this.active;
    if (active) {
      this.finish(failedOutcome('internal_error', 'host', 'code mode sandbox thread exited unexpectedly', active.bridge.dispatchStarted));
    }
    this.state = 'dead';
    this.events.dead(this, !wasReady);
  }

  /** Ends the active run (if any) with `outcome`. */
  private finish(outcome: CellOutcome): void {
    const active = this.active;
    if (!active) return;
    this.active = undefined;
    clearTimeout(active.watchdog);
    active.bridge.close();
    active.resolve(outcome);
  }

  private post(message: ToThread): void {
    this.worker.postMessage(message);
  }
}

function failedOutcome(
  code: 'timeout' | 'internal_error' | 'runtime_unavailable',
  phase: 'guest' | 'host',
  error: string,
  bridgeDispatchStarted: boolean,
): CellOutcome {
  return { status: 'failed', code, phase, error, output: [], consoleTruncated: false, bridgeDispatchStarted };
}

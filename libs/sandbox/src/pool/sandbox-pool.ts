import type { BridgeHost, CellOutcome, CellRunRequest, SandboxVariant } from '../engine/types';
import { NOT_STARTED_MESSAGE, SandboxPoolClosedError, SandboxStartError } from '../errors';
import { threadScriptPath } from '../thread/thread-script';
import { type PoolLogger, PoolThread } from './pool-thread';

export interface SandboxPoolOptions {
  /** Number of worker threads; each runs one cell at a time. */
  threads: number;
  logger?: PoolLogger;
  /** QuickJS build. @default 'release' ('debug' adds assertions and leak checks; for tests) */
  variant?: SandboxVariant;
  /** How long past a run's deadline the watchdog waits before terminating its thread. @default 300 */
  watchdogGraceMs?: number;
}

interface Queued {
  request: CellRunRequest;
  host: BridgeHost | undefined;
  timer: NodeJS.Timeout;
  resolve(outcome: CellOutcome): void;
}

const RESPAWN_BACKOFF_MS = 1000;

/** A pool of cell threads: queues runs while every thread is busy and replaces dead threads. */
export class SandboxPool {
  private readonly threads = new Set<PoolThread>();
  private readonly queue: Queued[] = [];
  private readonly script = threadScriptPath();
  private readonly log: PoolLogger;
  private closed = false;

  private constructor(private readonly options: SandboxPoolOptions) {
    this.log = options.logger ?? (() => undefined);
  }

  /** Spawns the threads (each compiles the wasm and prepares an instance); resolves when all are ready. */
  static async start(options: SandboxPoolOptions): Promise<SandboxPool> {
    if (!Number.isInteger(options.threads) || options.threads < 1) {
      throw new SandboxStartError('a sandbox pool needs at least one thread');
    }
    const pool = new SandboxPool(options);
    const spawned = Array.from({ length: options.threads }, () => pool.spawn());
    try {
      const timings = await Promise.all(spawned.map((thread) => thread.ready));
      pool.log('info', 'sandbox pool ready', { threads: options.threads, timings });
      return pool;
    } catch (error) {
      await pool.close();
      throw error;
    }
  }

  /** Runs a cell on the next free thread. A cell no thread starts within its budget is not run. */
  run(request: CellRunRequest, host?: BridgeHost): Promise<CellOutcome> {
    if (this.closed) return Promise.reject(new SandboxPoolClosedError());
    return new Promise((resolve) => {
      const queued: Queued = { request, host, resolve, timer: setTimeout(() => this.expire(queued), request.limits.timeoutMs) };
      this.queue.push(queued);
      this.dispatch();
    });
  }

  stats(): { threads: number; busy: number; idle: number; starting: number } {
    const count = (state: string) => [...this.threads].filter((thread) => thread.state === state).length;
    return { threads: this.threads.size, busy: count('busy'), idle: count('idle'), starting: count('starting') };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const queued of this.queue.splice(0)) {
      clearTimeout(queued.timer);
      queued.resolve(notStarted(queued.request, 'code mode sandbox pool closed'));
    }
    await Promise.all([...this.threads].map((thread) => thread.terminate()));
    this.threads.clear();
  }

  private spawn(): PoolThread {
    const thread = new PoolThread(this.script, this.options.variant ?? 'release', this.options.watchdogGraceMs ?? 300, {
      idle: () => this.dispatch(),
      dead: (dead, beforeReady) => this.replace(dead, beforeReady),
      log: this.log,
    });
    this.threads.add(thread);
    return thread;
  }

  private replace(dead: PoolThread, beforeReady: boolean): void {
    this.threads.delete(dead);
    if (this.closed) return;
    if (beforeReady) this.log('error', 'sandbox thread died before it was ready; respawning after backoff');
    const respawn = () => {
      if (!this.closed) this.spawn();
    };
    if (beforeReady) setTimeout(respawn, RESPAWN_BACKOFF_MS).unref();
    else respawn();
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const idle = this.pickIdle();
      if (!idle) return;
      const queued = this.queue.shift()!;
      clearTimeout(queued.timer);
      idle.run(queued.request, queued.host).then((outcome) => queued.resolve(outcome), (error: unknown) => {
        this.log('error', 'sandbox run failed on the host', { error: String(error) });
        queued.resolve(notStarted(queued.request, 'code mode sandbox thread refused the run'));
      });
    }
  }

  /** An idle thread, preferring one whose next VM is already prepared. */
  private pickIdle(): PoolThread | undefined {
    let fallback: PoolThread | undefined;
    for (const thread of this.threads) {
      if (thread.state !== 'idle') continue;
      if (thread.warm) return thread;
      fallback ??= thread;
    }
    return fallback;
  }

  private expire(queued: Queued): void {
    const index = this.queue.indexOf(queued);
    if (index < 0) return;
    this.queue.splice(index, 1);
    queued.resolve(notStarted(queued.request, NOT_STARTED_MESSAGE));
  }
}

function notStarted(_request: CellRunRequest, error: string): CellOutcome {
  return { status: 'failed', code: 'runtime_unavailable', phase: 'host', error, output: [], consoleTruncated: false, bridgeDispatchStarted: false };
}

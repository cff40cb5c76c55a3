import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { FairQueue } from '@codemode/fairness';
import { bodyThreadScriptPath } from './body-thread-script';
import type { BodyTask, BodyTaskResults } from './body-tasks';

/**
 * Bodies up to this size are parsed and checked on the event loop: the check of 8 KiB of code
 * costs about 1–5 ms there (acorn, on a loaded 2-core machine), a round trip to a body thread
 * about 0.3 ms plus the copy. Past it the cost grows with the body (≈1.5 s for 1 MiB of code,
 * ≈0.4 s for JSON.parse of 16 MiB of tool schemas) and the work goes to a body thread.
 */
export const INLINE_BODY_BYTES = 8 * 1024;
/** Two threads: one tenant's big body never holds up every other tenant's. */
const BODY_THREADS = 2;
/**
 * Threads one tenant holds at once: its big bodies take one core at most, and the other core stays
 * for the event loop, Redis and every other tenant (SPEC §10 "Fate isolation"). With both threads a
 * tenant sending twenty ~11 MB registrations held both cores of a 2-core machine for seconds.
 */
const THREADS_PER_TENANT = 1;
/** A body whose parse needs more than this fails alone, not the API. */
const BODY_THREAD_HEAP_MB = 768;
/**
 * Niceness of a body thread, where it is the thread's own (Linux): a tenant's big-body parse yields
 * the cores to the API's event loop, Redis and the worker, which serve every tenant, so a flood of
 * big bodies slows that tenant's bodies rather than everyone's requests (SPEC §10 "Fate isolation").
 */
export const BODY_THREAD_NICE = 10;

/** Thrown when a body thread died or failed on a task: the request it carried is refused, never the API. */
export class BodyThreadError extends Error {
  constructor(readonly reason: string) {
    super(`body thread failed: ${reason}`);
    this.name = 'BodyThreadError';
  }
}

interface Job {
  tenant: string;
  task: BodyTask;
  resolve: (result: unknown) => void;
  reject: (error: BodyThreadError) => void;
}

/**
 * A small pool of worker threads for the API's input work whose cost a tenant controls (SPEC §10
 * "Event loops"): parsing large JSON bodies, checking their depth, their schemas and the code of
 * an exec. Tasks wait in a queue served round-robin across tenants, and a tenant holds at most
 * THREADS_PER_TENANT threads at once, so a tenant sending many big bodies delays another tenant's
 * big body by at most one of its own and never holds every core; small bodies never come here. Threads start on first use and are replaced when one dies.
 */
@Injectable()
export class BodyThreads implements OnModuleDestroy {
  private readonly queue = new FairQueue<Job>();
  private readonly threads: BodyThread[] = [];
  /** Tasks of each tenant on a thread now. */
  private readonly running = new Map<string, number>();
  private closed = false;

  constructor(private readonly size = BODY_THREADS) {}

  run<K extends BodyTask['kind']>(tenant: string, task: Extract<BodyTask, { kind: K }>): Promise<BodyTaskResults[K]> {
    return new Promise<BodyTaskResults[K]>((resolve, reject) => {
      if (this.closed) {
        reject(new BodyThreadError('the API is shutting down'));
        return;
      }
      this.queue.push(tenant, { tenant, task, resolve: resolve as (result: unknown) => void, reject });
      this.pump();
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.reject(new BodyThreadError('the API is shutting down'));
    await Promise.all(this.threads.map((thread) => thread.close()));
  }

  private pump(): void {
    while (this.queue.size > 0) {
      let thread = this.threads.find((candidate) => !candidate.busy);
      if (!thread && this.threads.length < this.size) {
        thread = new BodyThread();
        this.threads.push(thread);
      }
      if (!thread) return;
      const job = this.queue.shiftFirst((tenant) => (this.running.get(tenant) ?? 0) < THREADS_PER_TENANT);
      if (!job) return;
      this.running.set(job.tenant, (this.running.get(job.tenant) ?? 0) + 1);
      void thread.run(job).then(() => {
        const left = (this.running.get(job.tenant) ?? 1) - 1;
        if (left > 0) this.running.set(job.tenant, left);
        else this.running.delete(job.tenant);
        this.pump();
      });
    }
  }
}

/** One worker thread running one task at a time; a thread that dies is replaced on the next task. */
class BodyThread {
  private worker: Worker | null = null;
  private current: { id: number; job: Job; settled: () => void } | null = null;
  private nextId = 1;

  get busy(): boolean {
    return this.current !== null;
  }

  run(job: Job): Promise<void> {
    return new Promise<void>((settled) => {
      const id = this.nextId++;
      this.current = { id, job, settled };
      this.started().postMessage({ id, task: job.task }, transferable(job.task));
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.fail('the API is shutting down');
    await worker?.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(bodyThreadScriptPath(), {
      resourceLimits: { maxOldGenerationSizeMb: BODY_THREAD_HEAP_MB },
      workerData: { nice: BODY_THREAD_NICE },
    });
    worker.unref();
    worker.on('message', (message: { id: number; result?: unknown; error?: string }) => {
      const current = this.current;
      if (current?.id !== message.id) return;
      this.current = null;
      if (message.error === undefined) current.job.resolve(message.result);
      else current.job.reject(new BodyThreadError(message.error));
      current.settled();
    });
    const gone = (reason: string): void => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.fail(reason);
    };
    worker.on('error', (error: Error) => gone(error.message));
    worker.on('exit', (code) => gone(`exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private fail(reason: string): void {
    const current = this.current;
    this.current = null;
    current?.job.reject(new BodyThreadError(reason));
    current?.settled();
  }
}

/** The body's bytes move to the thread instead of being copied, when they own their buffer. */
function transferable(task: BodyTask): ArrayBuffer[] {
  if (!('bytes' in task)) return [];
  const { buffer, byteOffset, byteLength } = task.bytes;
  return buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength ? [buffer] : [];
}

import { RunReplySchema, type CodeModeResult } from '@codemode/contracts';
import type { RedisClient } from './redis';
import { ReplyWaitAbortedError } from './errors';
import type { KeySpace } from './keys';
import { closeSubscriber } from './redis';

interface Waiter {
  onStarted?: () => void;
  resolve: (result: CodeModeResult) => void;
}

/**
 * The API instance's inbox: workers publish `started` and `result` replies for the runs it waits
 * on (from inside the scripts that append those events, so a reply never precedes its event).
 *
 * Pub/sub delivers only to current subscribers and loses what is published during a reconnect:
 * register `waitFor` before enqueueing the job, and fall back to reading the run projection when
 * a wait ends without an answer.
 */
export class RunReplies {
  readonly channel: string;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly onMessage = (channel: string, message: string) => this.dispatch(channel, message);

  /** @param subscriber a dedicated connection, owned (and closed) by this object */
  constructor(
    private readonly subscriber: RedisClient,
    keys: KeySpace,
    instanceId: string,
  ) {
    this.channel = keys.reply(instanceId);
  }

  async start(): Promise<void> {
    this.subscriber.on('message', this.onMessage);
    // Not waiting for Redis: an API must boot (and report not-ready) during an outage. The offline
    // queue sends SUBSCRIBE once connected, and ioredis re-subscribes after every reconnect.
    await this.subscriber.subscribe(this.channel);
  }

  /**
   * Resolves with the run's result; `onStarted` fires when a worker claims it. Several waiters
   * may wait on one run (an idempotent duplicate waits for the first's answer).
   * @throws ReplyWaitAbortedError (rejection) when `signal` aborts first
   */
  waitFor(runId: string, opts: { onStarted?: () => void; signal: AbortSignal }): Promise<CodeModeResult> {
    const { signal } = opts;
    if (signal.aborted) return Promise.reject(new ReplyWaitAbortedError(runId));
    return new Promise<CodeModeResult>((resolve, reject) => {
      const set = this.waiters.get(runId) ?? new Set<Waiter>();
      this.waiters.set(runId, set);
      const remove = () => {
        set.delete(waiter);
        if (set.size === 0 && this.waiters.get(runId) === set) this.waiters.delete(runId);
        signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        remove();
        reject(new ReplyWaitAbortedError(runId));
      };
      const waiter: Waiter = {
        onStarted: opts.onStarted,
        resolve: (result) => {
          remove();
          resolve(result);
        },
      };
      set.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Resolves with the `answer` a worker pushes for request `requestId` (shell requests).
   * @throws ReplyWaitAbortedError (rejection) when `signal` aborts first
   */
  waitForAnswer(requestId: string, signal: AbortSignal): Promise<unknown> {
    return this.waitFor(requestId, { signal });
  }

  /** Unsubscribes and closes the subscriber connection; pending waits stay until their signals abort. */
  async close(): Promise<void> {
    await closeSubscriber(this.subscriber, this.onMessage);
  }

  private dispatch(channel: string, message: string): void {
    if (channel !== this.channel) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return; // not ours to fail on: a malformed message must not break other waits
    }
    const reply = RunReplySchema.safeParse(parsed);
    if (!reply.success) return;
    const set = this.waiters.get(reply.data.runId);
    if (!set) return;
    for (const waiter of [...set]) {
      if (reply.data.kind === 'started') waiter.onStarted?.();
      else if (reply.data.kind === 'result') waiter.resolve(reply.data.result);
      else waiter.resolve(reply.data.answer as CodeModeResult);
    }
  }
}

/**
 * Worker side: the `result` reply a run's terminal (or parked) event carries, published by the same
 * script that appends the event, so an answer never reports what the log does not hold.
 */
export function resultReply(channel: string, runId: string, result: CodeModeResult): { channel: string; message: string } {
  return { channel, message: JSON.stringify({ kind: 'result', runId, result }) };
}

/**
 * Tells the waiting API instance that a worker (again) starts the run's leg now, so its answer
 * deadline counts from here: a run rebuilt by replay sends it once the rebuild is done.
 */
export async function publishStarted(redis: RedisClient, channel: string, runId: string, workerId: string): Promise<void> {
  await redis.publish(channel, JSON.stringify({ kind: 'started', runId, workerId }));
}

/** Worker side: pushes a request's answer to the API instance waiting on `channel`. */
export async function publishAnswer(redis: RedisClient, channel: string, requestId: string, answer: unknown): Promise<void> {
  await redis.publish(channel, JSON.stringify({ kind: 'answer', runId: requestId, answer }));
}

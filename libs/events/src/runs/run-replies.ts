import { Cluster } from 'ioredis';
import { RunReplySchema, type CodeModeResult, type SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import { CLUSTER_SLOTS, keySlot, slotTag } from '../platform/cluster-slots';
import { ReplyWaitAbortedError } from '../platform/errors';
import type { KeySpace } from '../platform/keys';
import { closeSubscriber } from '../platform/redis';

/** How long after a change of subscribers RunReplies subscribes again (changes come in bursts). */
const RESUBSCRIBE_AFTER_MS = 500;

interface Waiter {
  onStarted?: () => void;
  onGap?: () => void;
  resolve: (result: CodeModeResult) => void;
}

/**
 * A channel on `ref`'s slot (scripts publish only there on a cluster) that no API listens on: the
 * `replyTo` of a leg a sweep rebuilds with no caller waiting (SPEC §16); its answer goes to the
 * next `wait` from the run.
 */
export function unheardReplyChannel(keys: KeySpace, ref: SessionRef): string {
  return `${keys.reply('unheard')}:{${slotTag(keySlot(keys.sessionBase(ref)))}}`;
}

/**
 * The API instance's inbox: workers publish `started` and `result` replies for the runs it waits
 * on (from inside the scripts that append those events, so a reply never precedes its event).
 *
 * Replies travel by sharded pub/sub (SPUBLISH, Redis 7), so on a Redis Cluster a reply is sent
 * by the node that holds the session and reaches only the subscribers of that node, never
 * broadcast to every node (SPEC §13). A script may publish only on a channel of its own slot, so
 * on a cluster the instance has one channel per slot (`<p>:reply:<instance>:{<tag of the slot>}`),
 * all subscribed at start (ioredis keeps one subscriber connection per primary and moves the
 * subscriptions on failover); `channelFor` names the one of a session's slot. On one Redis there
 * is one channel.
 *
 * Pub/sub delivers only to current subscribers and loses what is published during a reconnect:
 * register `waitFor` before enqueueing the job, and fall back to reading the run projection when
 * a wait ends without an answer. Once the subscriptions are back after a reconnect or a failover,
 * every waiter's `onGap` fires: a reply may have been lost meanwhile, so the waiter reads its run
 * then instead of at its deadline (SPEC §17: no session unserved past 15 s of a failover).
 */
export class RunReplies {
  private readonly channel: string;
  private readonly sharded: boolean;
  private readonly cluster: boolean;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly onMessage = (channel: string, message: string) => this.dispatch(channel, message);
  private resubscribeTimer: NodeJS.Timeout | undefined;
  /** The subscriber was ready once: a later `ready` is a reconnect. */
  private readyOnce = false;

  /**
   * @param subscriber a dedicated connection, owned (and closed) by this object
   * @param options.perSlot one channel per slot on a cluster [true]: needed when scripts publish the
   * answers (a script publishes only on its own slot); false for answers published by plain
   * commands (a node's answer to a worker), so one channel serves
   */
  constructor(
    private readonly subscriber: RedisClient,
    private readonly keys: KeySpace,
    instanceId: string,
    options: { perSlot?: boolean } = {},
  ) {
    this.channel = keys.reply(instanceId);
    this.cluster = subscriber instanceof Cluster;
    this.sharded = this.cluster && options.perSlot !== false;
  }

  /** The channel a worker answers on about `ref`'s runs and requests (a job's `replyTo`). */
  channelFor(ref: SessionRef): string {
    return this.sharded ? this.slotChannel(keySlot(this.keys.sessionBase(ref))) : this.channel;
  }

  /** The one channel of an inbox made with `perSlot: false`. */
  get onlyChannel(): string {
    return this.channel;
  }

  async start(): Promise<void> {
    this.subscriber.on('smessage', this.onMessage);
    // ioredis moves the subscriptions of a failed primary to its successor's new subscriber, but
    // that subscriber can be left unconnected (seen with ioredis 6.0.0 under load: the replies of
    // the failed primary's slots never arrive again). Subscribing again is a no-op where the
    // subscription holds and connects the new subscriber where it does not.
    if (this.cluster) this.subscriber.on('+subscriber', () => this.resubscribeSoon());
    // One Redis: ioredis subscribes again by itself on every reconnect, then says `ready`.
    else this.subscriber.on('ready', () => this.afterReconnect());
    await this.subscribeAll();
  }

  private resubscribeSoon(): void {
    clearTimeout(this.resubscribeTimer);
    this.resubscribeTimer = setTimeout(
      () =>
        void this.subscribeAll().then(
          () => this.gap(),
          () => undefined,
        ),
      RESUBSCRIBE_AFTER_MS,
    );
    this.resubscribeTimer.unref();
  }

  private afterReconnect(): void {
    if (this.readyOnce) this.gap();
    this.readyOnce = true;
  }

  /** Tells every waiter that replies may have been lost while the subscriptions moved. */
  private gap(): void {
    for (const set of this.waiters.values()) for (const waiter of [...set]) waiter.onGap?.();
  }

  private async subscribeAll(): Promise<void> {
    // Not waiting for Redis: an API must boot (and report not-ready) during an outage. The offline
    // queue sends SSUBSCRIBE once connected, and ioredis re-subscribes after every reconnect.
    if (!this.sharded) {
      await this.subscriber.ssubscribe(this.channel);
      return;
    }
    // One channel per command: SSUBSCRIBE takes channels of one slot only.
    await Promise.all(Array.from({ length: CLUSTER_SLOTS }, (_, slot) => this.subscriber.ssubscribe(this.slotChannel(slot))));
  }

  private slotChannel(slot: number): string {
    return `${this.channel}:{${slotTag(slot)}}`;
  }

  /**
   * Resolves with the run's result; `onStarted` fires when a worker claims it, `onGap` when the
   * subscriptions came back after a reconnect (a reply may have been lost). Several waiters may
   * wait on one run (an idempotent duplicate waits for the first's answer).
   * @throws ReplyWaitAbortedError (rejection) when `signal` aborts first
   */
  waitFor(runId: string, opts: { onStarted?: () => void; onGap?: () => void; signal: AbortSignal }): Promise<CodeModeResult> {
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
        onGap: opts.onGap,
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
    clearTimeout(this.resubscribeTimer);
    await closeSubscriber(this.subscriber, this.onMessage);
  }

  private dispatch(channel: string, message: string): void {
    if (channel !== this.channel && !channel.startsWith(`${this.channel}:{`)) return;
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
  await redis.spublish(channel, JSON.stringify({ kind: 'started', runId, workerId }));
}

/** Worker side: pushes a request's answer to the API instance waiting on `channel`. */
export async function publishAnswer(redis: RedisClient, channel: string, requestId: string, answer: unknown): Promise<void> {
  await redis.spublish(channel, JSON.stringify({ kind: 'answer', runId: requestId, answer }));
}

import { Cluster, Redis, ReplyError, type ChainableCommander } from 'ioredis';
import type { RedisSettings } from '@codemode/config';
import { ErrorGate } from './error-gate';
import { EventsError, StoreCommandError, StoreFullError, StoreUnavailableError } from './errors';

/** One Redis or a Redis Cluster (SPEC §13): every store takes either. */
export type RedisClient = Redis | Cluster;

/** Where to connect: a URL of one Redis, or the settings (a cluster when they name seed nodes). */
export type RedisTarget = string | Pick<RedisSettings, 'url' | 'clusterNodes' | 'username' | 'password'>;

export interface CreateRedisOptions {
  /** CLIENT SETNAME, so `CLIENT LIST` says who holds each connection. */
  name?: string;
  /** Connect on first `connect()` instead of at once. @default false */
  lazy?: boolean;
  /**
   * Fail fast while Redis is down (API calls): no offline queue, one retry, bounded commands.
   * Set false for connections that should wait out an outage (BullMQ workers, subscribers).
   * @default true
   */
  failFast?: boolean;
  /** A connection for (S)SUBSCRIBE (RunReplies): waits out outages, resubscribes. Implies failFast false. */
  subscriber?: boolean;
  /**
   * A connection for blocking commands (BullMQ Worker needs maxRetriesPerRequest null). Implies
   * failFast false, and its blocking commands skip auto-pipelining (BLOCKING_COMMANDS).
   */
  blocking?: boolean;
  /**
   * Told about connection errors, at most once per 10 s per cause over all of the process's
   * connections (ioredis retries on its own; readiness reports the outage). Without it they are
   * dropped rather than printed raw.
   */
  onError?: (error: Error) => void;
}

/** Connection errors are told once per 10 s per cause, over all of a process's connections. */
const ERROR_REPORT_INTERVAL_MS = 10_000;

/** How often a reply subscriber reads the slot map: answers are lost while its subscriptions point at a failed primary. */
const SUBSCRIBER_SLOTS_REFRESH_MS = 1_000;

/**
 * Sent as they are on a `blocking` connection, never auto-pipelined: a blocking command holds its
 * connection until it answers, so nothing batches with it, and each auto-pipeline is a new ioredis
 * Pipeline that copies every script defined on the client — BullMQ defines its 64 on each of a
 * Worker's connections (which duplicate ours): ~10 KiB of garbage per BZPOPMIN (issue 41).
 */
const BLOCKING_COMMANDS = ['bzpopmin', 'bzpopmax', 'blpop', 'brpop', 'blmove', 'brpoplpush'];

/** Reconnect backoff: capped, never giving up, so recovery needs no restart. */
const reconnectDelay = (times: number): number => Math.min(50 * 2 ** Math.min(times, 6), 2_000);

/** Redis's refusal of a write at `maxmemory` under `noeviction` (also raised inside a script). */
const OUT_OF_MEMORY_REPLY = /^OOM\b/;

/** Redis refusing writes for want of replicas (`min-replicas-to-write`) or after a failed save (`stop-writes-on-bgsave-error`). */
const WRITES_STOPPED_REPLY = /^(NOREPLICAS|MISCONF)\b/;

/** Server replies that mean "not now" rather than "wrong": treated as an outage. */
const UNAVAILABLE_REPLIES = /^(LOADING|BUSY|MASTERDOWN|READONLY|CLUSTERDOWN|TRYAGAIN|NOREPLICAS|MOVED|ASK)\b/;

/**
 * An ioredis client tuned so "Redis down" fails fast and "Redis back" heals by itself:
 * - reconnects forever with capped backoff (never gives up, so recovery needs no restart);
 * - with `failFast`, commands issued while disconnected are rejected at once
 *   (`enableOfflineQueue: false`), in-flight ones get one retry, and `commandTimeout` bounds a
 *   half-open socket, so a request answers `runtime_unavailable` instead of hanging;
 * - auto-pipelining batches the many small script calls of concurrent requests.
 * With cluster seed nodes it is an ioredis `Cluster` on the same terms: MOVED/ASK are followed,
 * CLUSTERDOWN/TRYAGAIN and a failing-over primary retried briefly, then "unavailable".
 * A fail-fast client rejects commands until it is ready: await `waitUntilReady` at boot.
 */
export function createRedis(target: RedisTarget, opts: CreateRedisOptions = {}): RedisClient {
  const failFast = opts.subscriber || opts.blocking ? false : (opts.failFast ?? true);
  const commandOptions = failFast ? { maxRetriesPerRequest: 1, commandTimeout: 5_000 } : { maxRetriesPerRequest: null };
  const settings = typeof target === 'string' ? null : target;
  const autoPipeliningIgnoredCommands = opts.blocking ? BLOCKING_COMMANDS : [];
  const redis: RedisClient = settings?.clusterNodes
    ? new Cluster(
        settings.clusterNodes.map(({ host, port }) => ({ host, port })),
        {
          lazyConnect: opts.lazy ?? false,
          enableAutoPipelining: true,
          autoPipeliningIgnoredCommands,
          enableOfflineQueue: !failFast,
          clusterRetryStrategy: reconnectDelay,
          // A failover takes a few seconds: retries (bounded by maxRedirections) span about that
          // long, then the caller sees "unavailable".
          retryDelayOnFailover: 200,
          retryDelayOnClusterDown: 200,
          retryDelayOnTryAgain: 100,
          retryDelayOnMoved: 0,
          // ioredis refreshes its slot map on MOVED and lost connections only, which is enough for
          // connections that send commands. A subscriber sends none after subscribing: a timer
          // makes it learn of a failover. (Not on every client: a worker has a Cluster per queue
          // shard, and a fleet's timers would add up to hundreds of CLUSTER SLOTS a second.)
          ...(opts.subscriber ? { slotsRefreshInterval: SUBSCRIBER_SLOTS_REFRESH_MS } : {}),
          shardedSubscribers: opts.subscriber === true,
          redisOptions: {
            connectionName: opts.name,
            username: settings.username,
            password: settings.password,
            connectTimeout: 2_000,
            ...commandOptions,
          },
        },
      )
    : new Redis(settings?.url ?? (target as string), {
        connectionName: opts.name,
        lazyConnect: opts.lazy ?? false,
        enableAutoPipelining: true,
        autoPipeliningIgnoredCommands,
        connectTimeout: 2_000,
        retryStrategy: reconnectDelay,
        ...(settings?.username ? { username: settings.username } : {}),
        ...(settings?.password ? { password: settings.password } : {}),
        enableOfflineQueue: !failFast,
        ...commandOptions,
      });
  redis.on('error', (error: Error) => {
    if (connectionErrors.admit(error)) opts.onError?.(error);
  });
  return redis;
}

const connectionErrors = new ErrorGate(ERROR_REPORT_INTERVAL_MS);

/**
 * A connection for blocking reads and subscriptions, owned by its caller: it inherits the
 * parent's address and credentials, but a BLOCK call must not hit the parent's command timeout,
 * and the offline queue lets it be used right after creation.
 */
export function duplicateForBlocking(redis: RedisClient, name: string): RedisClient {
  const connection = {
    connectionName: name,
    commandTimeout: undefined,
    // Client-side guard for a BLOCK whose socket died silently: BLOCK ms + grace.
    blockingTimeout: 30_000,
    maxRetriesPerRequest: 1,
  };
  const blocking: RedisClient =
    redis instanceof Cluster
      ? redis.duplicate(undefined, {
          lazyConnect: true,
          enableAutoPipelining: false,
          enableOfflineQueue: true,
          redisOptions: { ...redis.options.redisOptions, ...connection },
        })
      : redis.duplicate({ ...connection, lazyConnect: true, enableAutoPipelining: false, enableOfflineQueue: true });
  // Its failures reach the caller through the rejected command; the event itself is noise.
  blocking.on('error', () => undefined);
  return blocking;
}

/**
 * A second connection of `redis`'s kind for values of megabytes (a client tool list reaches
 * 16 MiB): on the shared connection every later command of every request waits behind such a
 * value in the socket, and auto-pipelining copies it once more into the batch. Owned by its
 * caller (`closeConnection`).
 */
export function duplicateForBulk(redis: RedisClient, name: string): RedisClient {
  // The offline queue lets it be used right after creation; the command timeout still bounds an outage.
  const bulk: RedisClient =
    redis instanceof Cluster
      ? redis.duplicate(undefined, {
          enableAutoPipelining: false,
          enableOfflineQueue: true,
          redisOptions: { ...redis.options.redisOptions, connectionName: name },
        })
      : redis.duplicate({ connectionName: name, enableAutoPipelining: false, enableOfflineQueue: true });
  // Its failures reach the caller through the rejected command; the event itself is noise.
  bulk.on('error', () => undefined);
  return bulk;
}

/**
 * Closes a connection at once, idempotently: ioredis arms a 2 s "destroy" timer on every
 * `disconnect()`, and one made after the socket closed is never cleared (it keeps a process alive).
 */
export function closeConnection(redis: RedisClient): void {
  if (redis.status !== 'end' && redis.status !== 'close') redis.disconnect();
}

/** Stops `listener` and closes a subscriber connection: QUIT when it is up, then at once either way. */
export async function closeSubscriber(subscriber: RedisClient, listener: (channel: string, message: string) => void): Promise<void> {
  subscriber.off('message', listener);
  subscriber.off('smessage', listener);
  try {
    if (subscriber.status === 'ready') await subscriber.quit();
  } finally {
    closeConnection(subscriber);
  }
}

/** Resolves once `redis` is ready; rejects with StoreUnavailableError after `timeoutMs`. */
export async function waitUntilReady(redis: RedisClient, timeoutMs = 5_000): Promise<void> {
  if (redis.status === 'ready') return;
  if (redis.status === 'wait') {
    await guard(() => redis.connect());
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const done = (err?: unknown) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('end', onEnd);
      if (err === undefined) resolve();
      else reject(new StoreUnavailableError(err));
    };
    const onReady = () => done();
    const onEnd = () => done(new StoreUnavailableError('connection ended'));
    const timer = setTimeout(() => done(`not ready after ${timeoutMs} ms`), timeoutMs);
    redis.once('ready', onReady);
    redis.once('end', onEnd);
  });
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const CONNECTION_MESSAGES =
  /Too many Cluster redirections|Cluster isn't ready|None of startup nodes is available|Failed to refresh slots cache|Connection is closed|Stream isn't writeable|Command timed out|Socket timeout|Reached the max retries|connect ETIMEDOUT/;

/**
 * ioredis's refusal of an auto-pipelined batch whose slots its slot map no longer puts on one
 * node: a MOVED (a failover moves every slot of the failed primary) updates that one slot of the
 * map until the whole map is read again, and a batch of several slots queued meanwhile is
 * refused before it is sent (redis/ioredis#2075). The map is changing, not wrong: "not now".
 */
const SLOT_MAP_CHANGING = /^All keys in the pipeline should belong to the same slots allocation group/;

/** True for what ioredis throws when it cannot talk to Redis or its slot map is changing, and for "not now" server replies. */
function isConnectionError(err: Error): boolean {
  const code = (err as Error & { code?: unknown }).code;
  return (
    err.name === 'MaxRetriesPerRequestError' ||
    (typeof code === 'string' && CONNECTION_CODES.has(code)) ||
    CONNECTION_MESSAGES.test(err.message) ||
    SLOT_MAP_CHANGING.test(err.message) ||
    (err.name === 'ReplyError' && UNAVAILABLE_REPLIES.test(err.message))
  );
}

/**
 * Maps anything a Redis call throws to a typed events error; typed errors pass through. The one
 * place that decides what a Redis failure means: outages (connection lost, timeout, LOADING,
 * BUSY, READONLY after a failover, CLUSTERDOWN, …) become StoreUnavailableError, a write refused
 * for memory StoreFullError (callers answer both runtime_unavailable / 503); anything else is a
 * StoreCommandError (a bug: internal_error).
 */
export function toStoreError(err: unknown): EventsError {
  if (err instanceof EventsError) return err;
  const kind = failureKind(err);
  if (kind === 'full') return new StoreFullError(err);
  if (kind === 'unavailable') return new StoreUnavailableError(err);
  return new StoreCommandError(err);
}

/**
 * What toStoreError makes of a failure that is not typed yet, without making the error: the
 * questions below are asked of every run's end (`undefined` when nothing failed), and an Error
 * captures its stack when made.
 */
function failureKind(err: unknown): StoreFailureReason | 'command' {
  // A MULTI Redis discarded (EXECABORT) failed for what its first queued command met: at
  // `maxmemory` Redis refuses every command queued in a MULTI, reads too.
  const reply = err instanceof Error ? (discardedFor(err) ?? err) : err;
  if (reply instanceof Error && reply.name === 'ReplyError' && OUT_OF_MEMORY_REPLY.test(reply.message)) return 'full';
  if (reply instanceof Error && isConnectionError(reply)) return 'unavailable';
  return 'command';
}

/** The error of the first command of a discarded MULTI (ioredis keeps them as `previousErrors`). */
function discardedFor(err: Error): Error | undefined {
  if (!err.message.startsWith('EXECABORT')) return undefined;
  const previous = (err as Error & { previousErrors?: unknown[] }).previousErrors?.[0];
  return previous instanceof Error ? previous : undefined;
}

/** Failures of a command that was never sent: no connection to send it on (the offline queue is off). */
const NEVER_SENT = /Stream isn't writeable|connect ECONNREFUSED|connect ETIMEDOUT|getaddrinfo/;

/**
 * False when a failed command certainly never reached Redis; true when it may have run with only
 * its reply lost (a timeout, a connection lost after the write), or run in part (a script refused
 * for memory at a later write). A caller closes what such a command may have left behind.
 */
export function mayHaveRun(err: unknown): boolean {
  const cause = err instanceof EventsError && err.cause instanceof Error ? err.cause : err;
  return !(cause instanceof Error && NEVER_SENT.test(cause.message));
}

/** True for a write Redis refused for memory (typed or raw ioredis errors). */
export function isStoreFull(err: unknown): boolean {
  return err instanceof EventsError ? err instanceof StoreFullError : failureKind(err) === 'full';
}

/**
 * True when Redis refused a command because it refuses writes for now: at `maxmemory`, for want of
 * replicas, after a failed save. It refuses a function that may write before it runs, where an
 * EVAL'd script runs until its first write (ScriptLoader).
 */
export function isWriteRefused(err: unknown): boolean {
  return isStoreFull(err) || (err instanceof Error && WRITES_STOPPED_REPLY.test(err.message));
}

/** True for errors that mean "Redis is unreachable right now" (typed or raw ioredis errors). */
export function isStoreUnavailable(err: unknown): boolean {
  // StoreFullError is a StoreUnavailableError: callers answer both alike.
  return err instanceof EventsError ? err instanceof StoreUnavailableError : failureKind(err) !== 'command';
}

/** Why Redis failed a command, as `codemode_store_failures_total{reason}` counts it. */
export type StoreFailureReason = 'full' | 'unavailable';
let storeFailureListener: ((reason: StoreFailureReason) => void) | undefined;

/** The process's metrics learn of every command Redis refused for memory or did not answer (one listener per process). */
export function onStoreFailure(listener: ((reason: StoreFailureReason) => void) | undefined): void {
  storeFailureListener = listener;
}

/** `toStoreError` for the failure of a command this process sent, counted once. */
export function failedCommand(err: unknown): EventsError {
  const error = toStoreError(err);
  if (err !== error && error instanceof StoreUnavailableError)
    storeFailureListener?.(error instanceof StoreFullError ? 'full' : 'unavailable');
  return error;
}

/** The servers that take writes: every primary of a cluster (as its client knows them now), or the one Redis. */
export function primaries(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** What `failedCommand` makes of an error reply a script caught (`pcall`) and handed back as text. */
export function caughtReplyError(message: string): EventsError {
  return failedCommand(new (ReplyError as new (message: string) => Error)(message));
}

/** Runs a store operation, translating its failures with `toStoreError` (counted: failedCommand). */
export async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw failedCommand(err);
  }
}

/** Runs a MULTI and unwraps its replies, translating failures with `toStoreError`. */
export async function execMulti(multi: ChainableCommander): Promise<unknown[]> {
  return guard(async () => {
    const replies = await multi.exec();
    if (!replies) throw new StoreUnavailableError('transaction aborted');
    return replies.map(([err, value]) => {
      if (err) throw err;
      return value;
    });
  });
}

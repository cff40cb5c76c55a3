import { Redis, type ChainableCommander, type RedisOptions } from 'ioredis';
import { EventsError, StoreCommandError, StoreUnavailableError } from './errors';

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
  /** A connection for SUBSCRIBE (RunReplies): waits out outages, resubscribes. Implies failFast false. */
  subscriber?: boolean;
  /** A connection for blocking commands (BullMQ Worker needs maxRetriesPerRequest null). Implies failFast false. */
  blocking?: boolean;
  /**
   * Told about connection errors, at most once per 10 s per connection (ioredis retries on its
   * own; readiness reports the outage). Without it they are dropped rather than printed raw.
   */
  onError?: (error: Error) => void;
}

const ERROR_REPORT_INTERVAL_MS = 10_000;

/** Server replies that mean "not now" rather than "wrong": treated as an outage. */
const UNAVAILABLE_REPLIES = /^(LOADING|BUSY|MASTERDOWN|READONLY|CLUSTERDOWN|TRYAGAIN|NOREPLICAS)\b/;

/**
 * An ioredis client tuned so "Redis down" fails fast and "Redis back" heals by itself:
 * - reconnects forever with capped backoff (never gives up, so recovery needs no restart);
 * - with `failFast`, commands issued while disconnected are rejected at once
 *   (`enableOfflineQueue: false`), in-flight ones get one retry, and `commandTimeout` bounds a
 *   half-open socket, so a request answers `runtime_unavailable` instead of hanging;
 * - auto-pipelining batches the many small script calls of concurrent requests.
 * A fail-fast client rejects commands until it is ready: await `waitUntilReady` at boot.
 */
export function createRedis(url: string, opts: CreateRedisOptions = {}): Redis {
  const failFast = opts.subscriber || opts.blocking ? false : (opts.failFast ?? true);
  const options: RedisOptions = {
    connectionName: opts.name,
    lazyConnect: opts.lazy ?? false,
    enableAutoPipelining: true,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2_000),
    ...(failFast
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 5_000 }
      : { enableOfflineQueue: true, maxRetriesPerRequest: null }),
  };
  const redis = new Redis(url, options);
  let lastReport = 0;
  redis.on('error', (error: Error) => {
    const now = Date.now();
    if (now - lastReport < ERROR_REPORT_INTERVAL_MS) return;
    lastReport = now;
    opts.onError?.(error);
  });
  return redis;
}

/**
 * A connection for blocking reads and subscriptions, owned by its caller: it inherits the
 * parent's address and credentials, but a BLOCK call must not hit the parent's command timeout,
 * and the offline queue lets it be used right after creation.
 */
export function duplicateForBlocking(redis: Redis, name: string): Redis {
  const blocking = redis.duplicate({
    connectionName: name,
    lazyConnect: true,
    enableAutoPipelining: false,
    enableOfflineQueue: true,
    commandTimeout: undefined,
    // Client-side guard for a BLOCK whose socket died silently: BLOCK ms + grace.
    blockingTimeout: 30_000,
    maxRetriesPerRequest: 1,
  });
  // Its failures reach the caller through the rejected command; the event itself is noise.
  blocking.on('error', () => undefined);
  return blocking;
}

/**
 * Closes a connection at once, idempotently: ioredis arms a 2 s "destroy" timer on every
 * `disconnect()`, and one made after the socket closed is never cleared (it keeps a process alive).
 */
export function closeConnection(redis: Redis): void {
  if (redis.status !== 'end' && redis.status !== 'close') redis.disconnect();
}

/** Resolves once `redis` is ready; rejects with StoreUnavailableError after `timeoutMs`. */
export async function waitUntilReady(redis: Redis, timeoutMs = 5_000): Promise<void> {
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
  /Connection is closed|Stream isn't writeable|Command timed out|Socket timeout|Reached the max retries|connect ETIMEDOUT/;

/** True for what ioredis throws when it cannot talk to Redis, and for "not now" server replies. */
function isConnectionError(err: Error): boolean {
  const code = (err as Error & { code?: unknown }).code;
  return (
    err.name === 'MaxRetriesPerRequestError' ||
    (typeof code === 'string' && CONNECTION_CODES.has(code)) ||
    CONNECTION_MESSAGES.test(err.message) ||
    (err.name === 'ReplyError' && UNAVAILABLE_REPLIES.test(err.message))
  );
}

/**
 * Maps anything a Redis call throws to a typed events error; typed errors pass through.
 * Outages become StoreUnavailableError (callers answer runtime_unavailable / 503); anything
 * else is a StoreCommandError (a bug: internal_error).
 */
export function toStoreError(err: unknown): EventsError {
  if (err instanceof EventsError) return err;
  if (err instanceof Error && isConnectionError(err)) return new StoreUnavailableError(err);
  return new StoreCommandError(err);
}

/** True for errors that mean "Redis is unreachable right now" (typed or raw ioredis errors). */
export function isStoreUnavailable(err: unknown): boolean {
  return toStoreError(err) instanceof StoreUnavailableError;
}

/** Runs a store operation, translating its failures with `toStoreError`. */
export async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw toStoreError(err);
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

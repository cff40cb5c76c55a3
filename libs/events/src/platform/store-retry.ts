import { isStoreUnavailable } from './redis';

export interface StoreRetryOptions {
  /** Stop retrying (and throw the last error) once this much time has passed. */
  giveUpMs: number;
  /** Called before each wait between tries. */
  onRetry?: (attempt: number, delayMs: number, error: unknown) => void;
}

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 2000;

/**
 * Runs a store write until Redis answers it: while Redis is unreachable it is tried again with
 * backoff (100 ms doubling to 2 s); any other error, or one past `giveUpMs`, is thrown. For
 * writes that must land after an outage (a run's outcome, closing or releasing what a failed
 * call left behind), never for answering a request.
 */
export async function retryWhileStoreUnavailable<T>(op: (attempt: number) => Promise<T>, options: StoreRetryOptions): Promise<T> {
  const giveUpAt = Date.now() + options.giveUpMs;
  let delay = FIRST_DELAY_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await op(attempt);
    } catch (error) {
      if (!isStoreUnavailable(error) || Date.now() + delay > giveUpAt) throw error;
      options.onRetry?.(attempt, delay, error);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}

import type { ServerResponse } from 'node:http';

/** What became of a response that was waiting for its socket. */
export type DrainOutcome = 'drained' | 'closed' | 'lagged';

/**
 * Resolves at once when `res` takes more writes; else once its socket drains, the connection
 * closes, or `maxLagMs` passes without a drain (the consumer stayed behind: SPEC §10).
 */
export function socketDrain(res: ServerResponse, maxLagMs: number): Promise<DrainOutcome> {
  if (res.destroyed) return Promise.resolve('closed');
  if (!res.writableNeedDrain) return Promise.resolve('drained');
  return new Promise((resolve) => {
    const settle = (outcome: DrainOutcome): void => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(outcome);
    };
    const onDrain = (): void => settle('drained');
    const onClose = (): void => settle('closed');
    const timer = setTimeout(() => settle('lagged'), maxLagMs);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

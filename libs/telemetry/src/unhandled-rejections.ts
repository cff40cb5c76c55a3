import type { Logger } from './logger';

/**
 * Logs promise rejections nothing handled instead of letting Node exit. ioredis can leave one
 * behind when Redis drops mid auto-pipeline (its connections here run without an offline queue):
 * our own command fails and is handled, the pipeline's internal promise is not (redis/ioredis#1511).
 * A Redis outage must not take the process down (SPEC §2: everything resumes without restarts).
 */
export function logUnhandledRejections(logger: Logger): void {
  process.on('unhandledRejection', (reason: unknown) => {
    logger.error({ err: reason }, 'unhandled promise rejection (logged; the process keeps running)');
  });
}

import type { Logger } from 'pino';

/** Longer than the largest cell budget (60 s), so running cells can finish. */
const SHUTDOWN_DEADLINE_MS = 70_000;

/**
 * SIGTERM/SIGINT: close the app (its shutdown hooks stop intake and drain work), then exit 0.
 * Nest's own shutdown hooks re-raise the signal after closing, which reports a kill instead of a
 * clean exit; a second signal or the deadline forces exit 1.
 */
export function exitGracefullyOnSignals(app: { close(): Promise<void> }, logger: Logger): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      logger.warn({ signal }, 'second signal during shutdown; exiting now');
      process.exit(1);
    }
    closing = true;
    logger.info({ signal }, 'shutting down: draining work');
    const deadline = setTimeout(() => {
      logger.error({ deadlineMs: SHUTDOWN_DEADLINE_MS }, 'shutdown deadline passed; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    app.close().then(
      () => {
        logger.info('shut down cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

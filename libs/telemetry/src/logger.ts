import pino, { type Logger } from 'pino';
import type { LoggerService } from '@nestjs/common';
import { logContextFields } from './log-context';
import { BatchedLogDestination } from './log-destination';
import { redactMessageArguments, redactSecrets } from './log-redaction';

export type { Logger } from 'pino';

/**
 * Structured JSON logs on stdout. Field names that can carry secrets are redacted (redactSecrets)
 * in every line's fields, the objects interpolated into its message and every child logger's
 * bindings, so a careless `log.info({ headers })` cannot leak a key.
 *
 * Lines are written asynchronously, in batches while they come fast (BatchedLogDestination): a log
 * call formats its line into a buffer and the write to stdout happens off the caller's path, so a
 * slow pipe or a full disk under the log collector never stalls a cell. The waiting lines are
 * written synchronously on exit, so the last lines before a crash are not lost.
 */
export function createLogger(
  options: { service: string; level: string; version: string },
  destination: pino.DestinationStream = new BatchedLogDestination(),
): Logger {
  const logger = pino(
    {
      level: options.level,
      base: { service: options.service, version: options.version, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: logContextFields,
      formatters: { level: (label) => ({ level: label }), log: redactSecrets },
      hooks: { logMethod: redactMessageArguments },
    },
    destination,
  );
  // pino applies no formatter to a child's bindings: they are redacted on the way in. A child is
  // made from its parent's prototype chain, so every descendant inherits this `child`.
  const pinoLogger = Object.getPrototypeOf(logger) as Logger;
  logger.child = function child<L extends string = never>(
    this: Logger,
    bindings: pino.Bindings,
    childOptions?: pino.ChildLoggerOptions<L>,
  ) {
    return pinoLogger.child.call<Logger, [pino.Bindings, pino.ChildLoggerOptions<L> | undefined], pino.Logger<L>>(
      this,
      redactSecrets(bindings),
      childOptions,
    );
  };
  return logger;
}

/**
 * Lets Nest's own messages (routes mapped, bootstrap errors) go through the same JSON logger. Its
 * `log` level is the framework's progress (modules initialised, every route mapped): at `debug`,
 * so a process starts with one line of its own at `info` (SPEC §19).
 */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}

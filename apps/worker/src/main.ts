import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadConfig, packageVersion, redisAddress } from '@codemode/config';
import { createLogger, exitGracefullyOnSignals, logUnhandledRejections, NestPinoLogger } from '@codemode/telemetry';
import { WorkerModule } from './worker.module';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env, packageVersion());
  const logger = createLogger({ service: 'codemode-worker', level: config.logLevel, version: config.version }).child({
    workerId: config.workerId,
  });
  const app = await NestFactory.create<NestExpressApplication>(WorkerModule.forRoot(config, logger), {
    logger: new NestPinoLogger(logger),
  });
  // Its health and metrics answers name no framework either (see the API's main).
  app.disable('x-powered-by');
  exitGracefullyOnSignals(app, logger);
  logUnhandledRejections(logger);
  await app.init();
  let metricsPort: number | null = config.workerMetricsPort;
  try {
    await app.listen(config.workerMetricsPort, config.host);
  } catch (error) {
    // SPEC §2: a taken port must not stop the worker from doing its work.
    logger.warn({ port: config.workerMetricsPort, err: error }, 'worker health/metrics port unavailable; continuing without it');
    metricsPort = null;
  }
  // SPEC §19: the one line at info a start writes (besides warnings).
  logger.info({ metricsPort, redis: redisAddress(config.redis), threads: config.sandboxThreads }, 'worker consuming cells');
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'worker failed to start', error: String(error) })}\n`);
  process.exit(1);
});

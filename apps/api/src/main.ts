import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig, packageVersion } from '@codemode/config';
import { ApiMetrics, createLogger, exitGracefullyOnSignals, logUnhandledRejections, NestPinoLogger } from '@codemode/telemetry';
import { AppModule } from './app.module';
import { rawJsonBody } from './core/raw-body.middleware';
import { httpDuration } from './metrics/http-duration.middleware';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env, packageVersion());
  const logger = createLogger({ service: 'codemode-api', level: config.logLevel, version: config.version });
  const app = await NestFactory.create(AppModule.forRoot(config, logger), {
    bodyParser: false,
    logger: new NestPinoLogger(logger),
  });
  app.use(httpDuration(app.get(ApiMetrics)));
  app.use(rawJsonBody);
  exitGracefullyOnSignals(app, logger);
  logUnhandledRejections(logger);
  await app.listen(config.port, config.host);
  logger.info({ host: config.host, port: config.port, auth: config.apiKeys !== null }, 'api listening');
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'api failed to start', error: String(error) })}\n`);
  process.exit(1);
});

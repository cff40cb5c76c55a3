import 'reflect-metadata';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { loadConfig, packageVersion } from '@codemode/config';
import { ApiMetrics, createLogger, exitGracefullyOnSignals, logUnhandledRejections, NestPinoLogger } from '@codemode/telemetry';
import { AppModule } from './app.module';
import { BodyThreads } from './bodies/body-threads';
import { ApiKeyRing } from './http/auth.guard';
import { authenticate } from './http/authenticate.middleware';
import { watchConnectionClose } from './http/connection-close';
import { rawJsonBody } from './http/raw-body.middleware';
import { httpDuration } from './metrics/http-duration.middleware';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env, packageVersion());
  const logger = createLogger({ service: 'codemode-api', level: config.logLevel, version: config.version });
  const app = await NestFactory.create(AppModule.forRoot(config, logger), {
    bodyParser: false,
    logger: new NestPinoLogger(logger),
  });
  // First: a close is watched from the request's first byte (a stream's slot must never outlive its client).
  app.use(watchConnectionClose());
  app.use(httpDuration(app.get(ApiMetrics)));
  // Order matters (SPEC §10 "API"): the key is checked before a byte of the body is read.
  app.use(authenticate(new ApiKeyRing(config.apiKeyGrants)));
  app.use(rawJsonBody(app.get(BodyThreads)));
  // `Expect: 100-continue` goes through the middleware too (Node would send the 100 first).
  const server = app.getHttpServer() as Server;
  server.on('checkContinue', (req, res) => server.emit('request', req, res));
  exitGracefullyOnSignals(app, logger);
  logUnhandledRejections(logger);
  await app.listen(config.port, config.host);
  logger.info({ host: config.host, port: config.port, auth: config.apiKeys !== null }, 'api listening');
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'api failed to start', error: String(error) })}\n`);
  process.exit(1);
});

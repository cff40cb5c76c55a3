import 'reflect-metadata';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { apiTenancy, loadConfig, packageVersion, redisAddress } from '@codemode/config';
import { ApiMetrics, createLogger, exitGracefullyOnSignals, logUnhandledRejections, NestPinoLogger } from '@codemode/telemetry';
import { AppModule } from './app.module';
import { BodyThreads } from './bodies/body-threads';
import { LargeBodyGate } from './bodies/large-body-gate';
import { ApiKeyRing } from './http/auth.guard';
import { accessLog } from './http/access-log.middleware';
import { authenticate } from './http/authenticate.middleware';
import { watchConnectionClose } from './http/connection-close';
import { rawJsonBody } from './http/raw-body.middleware';
import { assignRequestId, enterRequestLogContext } from './http/request-id';
import { httpDuration } from './metrics/http-duration.middleware';
import { CodeModeCalls } from './runs/code-mode-calls';
import { codeModeRoute } from './runs/code-mode-route';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env, packageVersion());
  const logger = createLogger({ service: 'codemode-api', level: config.logLevel, version: config.version });
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, logger), {
    bodyParser: false,
    logger: new NestPinoLogger(logger),
  });
  // An answer names no framework: a header that tells an attacker which one to probe, on every answer.
  app.disable('x-powered-by');
  // SPEC §19: the id and the access line cover every answer, the middleware's own refusals included.
  app.use(assignRequestId());
  app.use(accessLog(logger));
  // A close is watched from the request's first byte (a stream's slot must never outlive its client).
  app.use(watchConnectionClose());
  app.use(httpDuration(app.get(ApiMetrics)));
  // Order matters (SPEC §10 "API"): the key is checked before a byte of the body is read.
  app.use(authenticate(new ApiKeyRing(config.apiKeyGrants)));
  app.use(rawJsonBody(app.get(BodyThreads), new LargeBodyGate()));
  app.use(enterRequestLogContext());
  // Last: REST exec and wait are served here, every rule above applied; the rest goes on to Nest.
  app.use(codeModeRoute(app.get(CodeModeCalls), logger));
  // `Expect: 100-continue` goes through the middleware too (Node would send the 100 first).
  const server: Server = app.getHttpServer();
  server.on('checkContinue', (req, res) => server.emit('request', req, res));
  exitGracefullyOnSignals(app, logger);
  logUnhandledRejections(logger);
  await app.listen(config.port, config.host);
  // SPEC §19: the one line at info a start writes (besides warnings): what listens where, which Redis, which mode.
  const tenancy = apiTenancy(config);
  logger.info(
    {
      host: config.host,
      port: config.port,
      ...(tenancy === 'multi' ? { metricsPort: config.apiMetricsPort } : {}),
      redis: redisAddress(config.redis),
      tenancy,
      auth: config.apiKeys !== null,
    },
    'api listening',
  );
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'api failed to start', error: String(error) })}\n`);
  process.exit(1);
});

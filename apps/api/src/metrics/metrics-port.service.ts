import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { apiTenancy, type AppConfig } from '@codemode/config';
import { ApiMetrics, PROMETHEUS_CONTENT_TYPE, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/**
 * In multi-tenant mode the API's `/metrics` is served on `API_METRICS_PORT` only, bound on `HOST`
 * like a worker's health and metrics port, never on the public port: its gauges count every
 * tenant's work (SPEC §10 "Tenants see their own numbers"). A taken port is a warning, as for a
 * worker: the API goes on serving without it. In single mode the public port serves it (PublicMetricsModule).
 */
@Injectable()
export class MetricsPort implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: ApiMetrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (apiTenancy(this.config) !== 'multi') return;
    const { apiMetricsPort: port, host } = this.config;
    const server = createServer((req, res) => void this.answer(req, res));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      this.server = server;
      // At debug: the start's one info line (main.ts) names the port.
      this.logger.debug({ host, port }, 'api metrics listening');
    } catch (error) {
      this.logger.warn({ port, err: error }, 'api metrics port unavailable; continuing without it');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    try {
      const text = await this.metrics.scrape();
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' }).end(text);
    } catch (error) {
      this.logger.warn({ err: error }, 'api metrics scrape failed');
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
    }
  }
}

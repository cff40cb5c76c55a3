import { METRICS_EXAMPLE } from './openapi-examples';
import { json, ok, type PathItem } from './openapi-builders';

/** Operational routes stay open even when API keys are configured: probes and scrapers hold none. */
const OPEN: Array<Record<string, string[]>> = [];

/** Routes at the root (health, metrics, docs), served without authentication. */
export function rootPaths(): Record<string, PathItem> {
  return {
    '/health/live': {
      get: {
        operationId: 'healthLive',
        tags: ['operations'],
        summary: 'Liveness: the process answers',
        security: OPEN,
        responses: { '200': ok('Alive.', 'HealthLive') },
      },
    },
    '/health/ready': {
      get: {
        operationId: 'healthReady',
        tags: ['operations'],
        summary: 'Readiness: Redis answers',
        description: 'Workers serve the same route on `WORKER_METRICS_PORT` (default 9464).',
        security: OPEN,
        responses: {
          '200': ok('Ready to take requests.', 'HealthReady'),
          '503': { description: 'Redis does not answer; not ready.', content: json('ApiErrorBody', ['unavailable']) },
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['operations'],
        summary: 'Prometheus metrics',
        description:
          'Prometheus text exposition format. In multi-tenant mode served on `API_METRICS_PORT` instead (404 here). Workers serve theirs on `WORKER_METRICS_PORT`.',
        security: OPEN,
        responses: {
          '200': { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' }, example: METRICS_EXAMPLE } } },
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openApiDocument',
        tags: ['operations'],
        summary: 'This OpenAPI 3.1 document',
        security: OPEN,
        responses: { '200': { description: 'The document.', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
    '/docs': {
      get: {
        operationId: 'docsPage',
        tags: ['operations'],
        summary: 'Browsable API reference (self-contained HTML, no external assets)',
        security: OPEN,
        responses: { '200': { description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    },
    '/console': {
      get: {
        operationId: 'consolePage',
        tags: ['operations'],
        summary: 'The operator console (asks for an API key in the browser; its files are under /console/)',
        security: OPEN,
        responses: {
          '200': { description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' }, example: '<!doctype html>…' } } },
        },
      },
    },
  };
}

import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPI } from 'openapi-types';
import { TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

const API_KEY = 'docs-key';
const PROBE_RUN_ID = 'cm_00000000-0000-4000-8000-000000000000';

/** Turns a documented path into a concrete one: a session never written, a run that does not exist. */
function concrete(path: string): string {
  return path.replace('{sid}', 'docs-probe').replace('{runId}', PROBE_RUN_ID);
}

describe('API docs', () => {
  let stack: TestStack;
  beforeAll(async () => {
    // API keys on: the docs must stay reachable without one while /v1 stays guarded.
    stack = await TestStack.start({ workers: 0, apiKeys: `${API_KEY}:docs` });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('serves /openapi.json without a key, and it validates as OpenAPI 3', async () => {
    const res = await stack.client().raw('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const api = await SwaggerParser.validate(res.body as OpenAPI.Document);
    expect(api).toMatchObject({ openapi: '3.1.0', info: { title: 'Code Mode backend' } });
  });

  it('serves /docs as a self-contained HTML page without a key', async () => {
    const res = await stack.client().raw('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = String(res.body);
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('POST</span> <code>/v1/sessions/{sid}/exec</code>');
    expect(html).not.toMatch(/<script|<link|src=/i);
  });

  it('still guards /v1', async () => {
    expect((await stack.client().raw('GET', '/v1/sessions/docs-probe')).status).toBe(401);
  });

  it('documents only routes the API serves', async () => {
    const doc = (await stack.client().raw('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const client = stack.client(API_KEY);
    const unrouted: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of ['get', 'put', 'post', 'delete'].filter((m) => m in item)) {
        // A JSON array is a bad body everywhere: REST routes answer 400, exec/wait a failed
        // result; no cell is queued (a refused exec is logged on the probe session, which the
        // stack's key prefix cleanup removes).
        const body = method === 'put' || method === 'post' ? '[]' : undefined;
        const res = await client.raw(method.toUpperCase(), concrete(path), { body, headers: { 'content-type': 'application/json' } });
        const error = (res.body as { error?: unknown } | null)?.error;
        // The router's own 404 says "Cannot GET /path"; a 404 of the resource names it instead.
        if (res.status === 404 && typeof error === 'string' && error.startsWith('Cannot '))
          unrouted.push(`${method.toUpperCase()} ${path}`);
        expect(res.status).toBeLessThan(500);
      }
    }
    // Multi-tenant mode serves /metrics on API_METRICS_PORT only, as its description says.
    expect(unrouted).toEqual(['GET /metrics']);
    expect((await fetch(`${stack.apiMetricsUrl}/metrics`)).status).toBe(200);
  });
});

import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPI } from 'openapi-types';
import type { z } from 'zod';
import { renderDocsPage } from './docs-page';
import type { MediaType, Operation, ResponseObject } from './openapi-builders';
import { buildOpenApiDocument } from './openapi-document';
import { EXAMPLES } from './openapi-examples';
import { REQUEST_SCHEMAS, RESPONSE_SCHEMAS, type SchemaName } from './openapi-schemas';

/** Every route of SPEC §2, the operator console's listings, and the operational routes, as `METHOD path`. */
const SPEC_ROUTES = [
  'PUT /v1/sessions/{sid}',
  'GET /v1/sessions/{sid}',
  'DELETE /v1/sessions/{sid}',
  'POST /v1/sessions/{sid}/exec',
  'POST /v1/sessions/{sid}/wait',
  'GET /v1/sessions/{sid}/runs/{runId}',
  'DELETE /v1/sessions/{sid}/runs/{runId}',
  'POST /v1/sessions/{sid}/runs/{runId}/tool-results',
  'PUT /v1/sessions/{sid}/tools',
  'GET /v1/sessions/{sid}/tools',
  'GET /v1/sessions/{sid}/tools/definitions',
  'GET /v1/sessions/{sid}/events',
  'GET /v1/sessions/{sid}/transcript',
  'GET /v1/sessions/{sid}/store',
  'POST /v1/sessions/{sid}/shell/exec',
  'POST /v1/sessions/{sid}/process',
  'GET /v1/sessions',
  'GET /v1/sessions/{sid}/runs',
  'GET /v1/fleet',
  'GET /v1/nodes',
  'POST /v1/nodes/connect',
  'POST /v1/nodes/{id}/results',
  'DELETE /v1/nodes/{id}',
  'GET /v1/policy',
  'PUT /v1/policy',
  'GET /v1/approvals',
  'GET /v1/sessions/{sid}/approvals',
  'POST /v1/sessions/{sid}/approvals/{approvalId}',
  'GET /v1/skills',
  'PUT /v1/skills/{name}',
  'DELETE /v1/skills/{name}',
  'PUT /v1/sessions/{sid}/skills',
  'GET /v1/tools',
  'PUT /v1/tools/{name}',
  'DELETE /v1/tools/{name}',
  'GET /health/live',
  'GET /health/ready',
  'GET /metrics',
  'GET /openapi.json',
  'GET /docs',
  'GET /console',
];

const doc = buildOpenApiDocument('1.2.3');

function operations(): Array<{ route: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    (['get', 'put', 'post', 'delete'] as const).flatMap((m) => (item[m] ? [{ route: `${m.toUpperCase()} ${path}`, op: item[m] }] : [])),
  );
}

/** A response as written in the document; shared error responses are `$ref`s without content. */
function contentOf(response: ResponseObject | { $ref: string }): Record<string, MediaType> | undefined {
  return 'content' in response ? response.content : undefined;
}

describe('buildOpenApiDocument', () => {
  it('validates as OpenAPI 3.1 with swagger-parser, every $ref resolving', async () => {
    // validate() dereferences in place: give it a copy.
    const api = await SwaggerParser.validate(structuredClone(doc) as unknown as OpenAPI.Document);
    expect(api.info.version).toBe('1.2.3');
    await expect(SwaggerParser.dereference(structuredClone(doc) as unknown as OpenAPI.Document)).resolves.toBeDefined();
  });

  it('is checked by a validator that does reject broken documents', async () => {
    // Guards the test above: a validator that accepted anything would prove nothing.
    const badParameter = structuredClone(doc);
    badParameter.components.parameters.Limit = { ...(badParameter.components.parameters.Limit as object), in: 'body' };
    await expect(SwaggerParser.validate(badParameter as unknown as OpenAPI.Document)).rejects.toThrow();
    const danglingRef = structuredClone(doc);
    contentOf(danglingRef.paths['/health/live'].get!.responses['200'])!['application/json'].schema = { $ref: '#/components/schemas/Nope' };
    await expect(SwaggerParser.validate(danglingRef as unknown as OpenAPI.Document)).rejects.toThrow();
  });

  it('documents exactly the routes of SPEC §2 and the operational routes', () => {
    expect(
      operations()
        .map((o) => o.route)
        .sort(),
    ).toEqual([...SPEC_ROUTES].sort());
  });

  it('puts /v1 behind the bearer scheme and leaves the root routes open', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    for (const { route, op } of operations()) {
      if (route.includes(' /v1/')) {
        expect(op.security).toBeUndefined();
        expect(op.responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
      } else {
        expect(op.security).toEqual([]);
      }
    }
  });

  it('gives every body and every success answer an example', () => {
    const missing: string[] = [];
    for (const { route, op } of operations()) {
      if (route === 'GET /openapi.json' || route === 'GET /docs' || route === 'GET /console') continue;
      const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'));
      const contents = [['body', op.requestBody?.content] as const, ...success.map(([status, r]) => [status, contentOf(r)] as const)];
      for (const [where, content] of contents) {
        if (content === undefined && where !== 'body') missing.push(`${route} ${where} (no content)`);
        for (const [type, media] of Object.entries(content ?? {})) {
          if (Object.keys(media.examples ?? {}).length === 0 && media.example === undefined) missing.push(`${route} ${where} ${type}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('has examples that the contract schemas accept', () => {
    const schemas: Record<SchemaName, z.ZodType> = { ...REQUEST_SCHEMAS, ...RESPONSE_SCHEMAS };
    for (const [name, examples] of Object.entries(EXAMPLES) as Array<[SchemaName, Record<string, { value: unknown }>]>) {
      expect(Object.keys(examples).length).toBeGreaterThan(0);
      for (const [key, example] of Object.entries(examples)) {
        const parsed = schemas[name].safeParse(example.value);
        expect({ name, key, issues: parsed.success ? [] : parsed.error.issues }).toEqual({ name, key, issues: [] });
      }
    }
  });

  it('renders every contract schema into components.schemas without $id or $schema', () => {
    const names = [...Object.keys(REQUEST_SCHEMAS), ...Object.keys(RESPONSE_SCHEMAS)];
    expect(Object.keys(doc.components.schemas).sort()).toEqual(names.sort());
    for (const schema of Object.values(doc.components.schemas)) {
      expect(schema).not.toHaveProperty('$id');
      expect(schema).not.toHaveProperty('$schema');
    }
    // A contract nested in another is referenced, not copied.
    expect(JSON.stringify(doc.components.schemas.RunView)).toContain('"$ref":"#/components/schemas/CodeModeResult"');
  });

  it('documents Idempotency-Key on exec, SSE on events and Retry-After on 503', () => {
    const exec = doc.paths['/v1/sessions/{sid}/exec'].post!;
    expect(exec.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header' });
    const events = doc.paths['/v1/sessions/{sid}/events'].get!.responses['200'] as { content: Record<string, unknown> };
    expect(Object.keys(events.content)).toEqual(['application/json', 'text/event-stream']);
    expect(doc.components.responses.Unavailable).toMatchObject({ headers: { 'Retry-After': expect.any(Object) } });
  });
});

describe('renderDocsPage', () => {
  const html = renderDocsPage(doc);

  it('lists every operation and links the document', () => {
    for (const route of SPEC_ROUTES) {
      const [method, path] = route.split(' ');
      expect(html).toContain(`${method}</span> <code>${path}</code>`);
    }
    expect(html).toContain('href="/openapi.json"');
  });

  it('loads nothing from elsewhere and escapes what it prints', () => {
    expect(html).not.toMatch(/<script|<link|src=|url\(/i);
    expect(html).not.toMatch(/href="(?!#|\/openapi\.json)/);
    expect(html).toContain('&#60;key&#62;');
  });
});

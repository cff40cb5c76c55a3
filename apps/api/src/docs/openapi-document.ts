import { APPROVAL_ID_PATTERN, NODE_ID_PATTERN, RUN_ID_PATTERN, SESSION_ID_PATTERN } from '@codemode/contracts';
import { errorResponses, type PathItem } from './openapi-builders';
import { componentSchemas, type JsonSchema } from './openapi-schemas';
import { rootPaths } from './root-paths';
import { nodePaths } from './node-paths';
import { policyPaths } from './policy-paths';
import { skillsPaths } from './skills-paths';
import { tenantToolsPaths } from './tenant-tools-paths';
import { v1Paths } from './v1-paths';

export interface OpenApiDocument {
  openapi: string;
  jsonSchemaDialect: string;
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string }>;
  security: Array<Record<string, string[]>>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, unknown>;
    parameters: Record<string, unknown>;
    headers: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
  };
}

const DESCRIPTION = [
  'Runs model-written JavaScript cells in QuickJS sandboxes (Code Mode `exec`/`wait`), plus shell `exec`/`process`.',
  'Everything under `/v1` takes `Authorization: Bearer <key>` when `CODEMODE_API_KEYS` is set; the root routes are open.',
  'Errors outside exec/wait are `{error, code, details?}`; exec and wait always answer 200 with a `CodeModeResult`.',
].join(' ');

/**
 * The OpenAPI 3.1 document of the REST surface (SPEC §2), built from the zod contracts so a
 * changed contract changes the document. Pure: same version in, same document out.
 */
export function buildOpenApiDocument(version: string): OpenApiDocument {
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: { title: 'Code Mode backend', version, description: DESCRIPTION },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'sessions', description: 'Session configuration, transcript and store' },
      { name: 'runs', description: 'Code Mode cells: exec, wait, abort, client tool results' },
      { name: 'tools', description: "Client tools, the tenant's tools (SPEC §18) and the catalog" },
      { name: 'events', description: 'The per-session event log' },
      { name: 'shell', description: 'Shell exec and process sessions' },
      { name: 'policy', description: 'Tool policy and approvals of tool calls (SPEC §11)' },
      { name: 'nodes', description: 'Paired nodes and their connections (SPEC §15)' },
      { name: 'skills', description: "The tenant's and sessions' Markdown skills, read by cells through `skills` (SPEC §15)" },
      { name: 'operations', description: 'Health, metrics and these docs (no authentication)' },
    ],
    paths: { ...v1Paths(), ...policyPaths(), ...nodePaths(), ...skillsPaths(), ...tenantToolsPaths(), ...rootPaths() },
    components: {
      schemas: componentSchemas(),
      responses: errorResponses(),
      parameters: PARAMETERS,
      headers: {
        RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
      },
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A key of `CODEMODE_API_KEYS` (`key:tenant` pairs); the key selects the tenant. Not checked when no keys are configured.',
        },
      },
    },
  };
}

const PARAMETERS: Record<string, unknown> = {
  SessionId: {
    name: 'sid',
    in: 'path',
    required: true,
    description: 'Client-chosen session id; any write creates the session.',
    schema: { type: 'string', pattern: SESSION_ID_PATTERN.source },
    example: 's1',
  },
  ApprovalId: {
    name: 'approvalId',
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: APPROVAL_ID_PATTERN.source },
    example: 'ap_4b0e6f7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b',
  },
  NodeId: {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: NODE_ID_PATTERN.source },
    example: 'nd_5b1f0c9e-2a47-4d8e-9c61-0f3e8b2d7a14',
  },
  RunId: {
    name: 'runId',
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: RUN_ID_PATTERN.source },
    example: 'cm_0f8e2a4c-7b1d-4c39-9a52-5e6d7c8b9a01',
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'Tenant + session scope, kept 24 h: a repeated key returns the first answer (waiting for it while the first still runs).',
    // Same rule as host-results' IDEMPOTENCY_KEY_PATTERN: 1-256 printable ASCII characters.
    schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,256}$' },
    example: 'turn-42-call-1',
  },
  After: {
    name: 'after',
    in: 'query',
    required: false,
    description: 'Cursor: an event id from a previous page (`next`).',
    schema: { type: 'string', pattern: '^\\d{1,20}-\\d{1,20}$' },
    example: '1736935200000-0',
  },
  Limit: {
    name: 'limit',
    in: 'query',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  },
  ListLimit: {
    name: 'limit',
    in: 'query',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
  },
  ListCursor: {
    name: 'cursor',
    in: 'query',
    required: false,
    description: 'The `next` of the previous page (opaque).',
    schema: { type: 'string', minLength: 1, maxLength: 512 },
  },
  LastEventId: {
    name: 'Last-Event-ID',
    in: 'header',
    required: false,
    description: 'SSE reconnection cursor; used when `after` is absent.',
    schema: { type: 'string' },
  },
};

import { ERROR_EXAMPLE_BY_STATUS, EXAMPLES } from './openapi-examples';
import { schemaRef, type SchemaName } from './openapi-schemas';

/** The slices of OpenAPI 3.1 this service uses; plain JSON, so the document serializes as is. */
export interface MediaType {
  schema: Record<string, unknown>;
  examples?: Record<string, { summary: string; value: unknown }>;
  example?: unknown;
}
export interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
}
export interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  parameters?: Array<Record<string, unknown>>;
  requestBody?: { required: boolean; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject | { $ref: string }>;
  security?: Array<Record<string, string[]>>;
}
export type PathItem = Partial<Record<'get' | 'put' | 'post' | 'delete', Operation>> & { parameters?: Array<{ $ref: string }> };

/** Status codes with a shared response in `components.responses`. */
export const ERROR_RESPONSES = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  429: 'TenantLimit',
  503: 'Unavailable',
} as const;
export type ErrorStatus = keyof typeof ERROR_RESPONSES;

const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: 'Bad input: `{error, code:"invalid_input", details?}` naming the field.',
  401: 'Missing or unknown bearer key (only when `CODEMODE_API_KEYS` is set).',
  403: 'The key has the `agent` role: it may not change tool policy or decide approvals (SPEC §11).',
  404: 'Unknown session or run (reads never create a session).',
  409: 'The run is in a state that refuses this (already ended, executing, being resumed).',
  413: "The body is over its route's cap (1 MiB; 16 MiB for exec, tools, tool-results and skills); refused without being read whole.",
  429: 'The tenant is at a quota (SPEC §10): `details.limit` is `rate`, `inflight` (exec/wait) or `streams` (SSE). Retry after `Retry-After` seconds; nothing was recorded.',
  503: 'Redis is unreachable; nothing was written. Retry after `Retry-After` seconds.',
};

/** A JSON body or answer of one component schema, with its examples. */
export function json(name: SchemaName, only?: string[]): Record<string, MediaType> {
  const all = EXAMPLES[name];
  const examples = only ? Object.fromEntries(only.map((key) => [key, all[key]])) : all;
  return { 'application/json': { schema: schemaRef(name), examples } };
}

export function ok(description: string, name: SchemaName, only?: string[]): ResponseObject {
  return { description, content: json(name, only) };
}

export function body(name: SchemaName): { required: boolean; content: Record<string, MediaType> } {
  return { required: true, content: json(name) };
}

/**
 * References to the shared error responses for the given statuses. Every `/v1` operation counts
 * against its tenant's request rate, so 429 is always among them.
 */
export function errors(...statuses: ErrorStatus[]): Record<string, { $ref: string }> {
  const all = statuses.includes(429) ? statuses : [...statuses, 429 as const];
  return Object.fromEntries(all.map((s) => [String(s), { $ref: `#/components/responses/${ERROR_RESPONSES[s]}` }]));
}

/** `components.responses`: one per error status, all with the `ApiErrorBody` shape. */
export function errorResponses(): Record<string, ResponseObject> {
  const out: Record<string, ResponseObject> = {};
  for (const [status, name] of Object.entries(ERROR_RESPONSES)) {
    const code = Number(status) as ErrorStatus;
    out[name] = {
      description: ERROR_DESCRIPTIONS[code],
      ...(code === 503 || code === 429 ? { headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } } : {}),
      content: json('ApiErrorBody', [ERROR_EXAMPLE_BY_STATUS[code]]),
    };
  }
  return out;
}

export function param(name: string): { $ref: string } {
  return { $ref: `#/components/parameters/${name}` };
}

import { z } from 'zod';
import {
  ApiErrorBodySchema,
  ClientToolsPutSchema,
  CodeModeExecInputSchema,
  CodeModeResultSchema,
  EventPageSchema,
  EventSchema,
  FleetViewSchema,
  ProcessInputSchema,
  RunListSchema,
  RunViewSchema,
  SessionConfigSchema,
  SessionListSchema,
  SessionPutInputSchema,
  SessionViewSchema,
  SessionDeletedSchema,
  ShellAnswerSchema,
  ShellExecInputSchema,
  ToolResultsInputSchema,
  ToolsViewSchema,
  TranscriptSchema,
  WaitInputSchema,
} from '@codemode/contracts';
import { NODE_REQUEST_SCHEMAS, NODE_RESPONSE_SCHEMAS } from './node-schemas';
import { POLICY_REQUEST_SCHEMAS, POLICY_RESPONSE_SCHEMAS } from './policy-schemas';
import { SKILLS_REQUEST_SCHEMAS, SKILLS_RESPONSE_SCHEMAS } from './skills-schemas';
import { TENANT_TOOLS_REQUEST_SCHEMAS, TENANT_TOOLS_RESPONSE_SCHEMAS } from './tenant-tools-schemas';

/*
 * Small answers the controllers type inline rather than through a contract schema; described here
 * so the document covers every route. Keep them in step with the controllers named beside each.
 */

/** `GET …/store` (StoreController). */
export const StoreViewSchema = z.object({ values: z.record(z.string(), z.unknown()) });
/** `POST …/tool-results` (RunsController), answered 202. */
export const ToolResultsAcceptedSchema = z.object({ accepted: z.number().int() });
/** `GET /health/live` (HealthController). */
export const HealthLiveSchema = z.object({ status: z.literal('ok') });
/** `GET /health/ready` (HealthController) when Redis answers. */
export const HealthReadySchema = z.object({
  status: z.literal('ok'),
  redis: z.literal('ok'),
  /** SPEC §19: workers holding a lease; null when the registry could not be read. Readiness does not depend on it. */
  workersLive: z.number().int().nullable(),
});

/** Request bodies, rendered as the client may send them (zod input: defaults are optional). */
export const REQUEST_SCHEMAS = {
  SessionPutInput: SessionPutInputSchema,
  CodeModeExecInput: CodeModeExecInputSchema,
  WaitInput: WaitInputSchema,
  ToolResultsInput: ToolResultsInputSchema,
  ClientToolsPut: ClientToolsPutSchema,
  ShellExecInput: ShellExecInputSchema,
  ProcessInput: ProcessInputSchema,
  ...POLICY_REQUEST_SCHEMAS,
  ...NODE_REQUEST_SCHEMAS,
  ...SKILLS_REQUEST_SCHEMAS,
  ...TENANT_TOOLS_REQUEST_SCHEMAS,
} satisfies Record<string, z.ZodType>;

/** Answers, rendered as the service sends them (zod output). */
export const RESPONSE_SCHEMAS = {
  CodeModeResult: CodeModeResultSchema,
  SessionConfig: SessionConfigSchema,
  SessionView: SessionViewSchema,
  SessionDeleted: SessionDeletedSchema,
  RunView: RunViewSchema,
  ToolsView: ToolsViewSchema,
  Event: EventSchema,
  EventPage: EventPageSchema,
  Transcript: TranscriptSchema,
  StoreView: StoreViewSchema,
  ToolResultsAccepted: ToolResultsAcceptedSchema,
  ShellAnswer: ShellAnswerSchema,
  ApiErrorBody: ApiErrorBodySchema,
  HealthLive: HealthLiveSchema,
  HealthReady: HealthReadySchema,
  SessionList: SessionListSchema,
  RunList: RunListSchema,
  FleetView: FleetViewSchema,
  ...POLICY_RESPONSE_SCHEMAS,
  ...NODE_RESPONSE_SCHEMAS,
  ...SKILLS_RESPONSE_SCHEMAS,
  ...TENANT_TOOLS_RESPONSE_SCHEMAS,
} satisfies Record<string, z.ZodType>;

export type SchemaName = keyof typeof REQUEST_SCHEMAS | keyof typeof RESPONSE_SCHEMAS;
export type JsonSchema = Record<string, unknown>;

const COMPONENT_PREFIX = '#/components/schemas/';

/** `$ref` to a named component schema. */
export function schemaRef(name: SchemaName): { $ref: string } {
  return { $ref: `${COMPONENT_PREFIX}${name}` };
}

/**
 * JSON Schema (2020-12, the dialect of OpenAPI 3.1) of every contract, for `components.schemas`.
 * A registry turns a schema nested in another (CodeModeResult inside RunView) into a `$ref`
 * instead of a copy. Refinements (URL checks, unique names) cannot be expressed and are left out;
 * the server still enforces them.
 */
export function componentSchemas(): Record<SchemaName, JsonSchema> {
  return {
    ...render(REQUEST_SCHEMAS, 'input'),
    ...render(RESPONSE_SCHEMAS, 'output'),
  } as Record<SchemaName, JsonSchema>;
}

function render(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const rendered = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    uri: (id) => `${COMPONENT_PREFIX}${id}`,
  });
  const out: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(rendered.schemas)) {
    // `$id` would be a bare fragment (not a valid 2020-12 `$id`) and `$schema` is implied by
    // OpenAPI 3.1's jsonSchemaDialect; both are dropped so components are plain schema objects.
    const { $id: _id, $schema: _schema, ...rest } = schema as JsonSchema;
    out[id] = rest;
  }
  return out;
}

import { z } from 'zod';

/** Tool catalog shapes (SPEC §4–§5). */
/** `platform`: a platform surface in the guest (SPEC §15: `skills.*`, `agents.run`, `nodes.*`), never a catalog entry. */
export const ToolSourceSchema = z.enum(['openclaw', 'mcp', 'client', 'platform']);
export type ToolSource = z.infer<typeof ToolSourceSchema>;

/** Longest client tool name; callable names are derived from it. */
export const MAX_CLIENT_TOOL_NAME_CHARS = 128;
/** Longest client tool description; the quick index never shows it, search and describe do. */
export const MAX_CLIENT_TOOL_DESCRIPTION_CHARS = 8192;
/** Largest serialized input or output JSON schema of one client tool. */
export const MAX_CLIENT_TOOL_SCHEMA_BYTES = 64 * 1024;
/** Longest webhook endpoint URL. */
export const MAX_CLIENT_TOOL_ENDPOINT_CHARS = 2048;
/** Per-call timeout bounds for a webhook client tool, in milliseconds. */
export const MIN_CLIENT_TOOL_TIMEOUT_MS = 100;
export const MAX_CLIENT_TOOL_TIMEOUT_MS = 300_000;
/** Most client tools one session may register with one `PUT /tools`. */
export const MAX_CLIENT_TOOLS = 512;

function serializedBytes(value: unknown): number {
  try {
    return new TextEncoder().encode(JSON.stringify(value) ?? '').length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** A JSON schema object: any JSON object, bounded in serialized size. */
const JsonSchemaObjectSchema = z
  .record(z.string(), z.unknown())
  .refine((schema) => serializedBytes(schema) <= MAX_CLIENT_TOOL_SCHEMA_BYTES, {
    message: `schema exceeds ${MAX_CLIENT_TOOL_SCHEMA_BYTES} bytes of serialized JSON`,
  });

/**
 * http or https only; which addresses it may reach is decided at registration and at connect time (SPEC §10 "Webhooks and MCP").
 * A session's `notifyUrl` is one too (SPEC §7).
 */
export const WebhookEndpointSchema = z
  .string()
  .max(MAX_CLIENT_TOOL_ENDPOINT_CHARS)
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return url.protocol === 'http:' || url.protocol === 'https:';
      } catch {
        return false;
      }
    },
    { message: 'endpoint must be an http or https URL' },
  );

/**
 * One client tool registered with `PUT /v1/sessions/{sid}/tools`.
 * - `name`: 1–128 characters, not blank; any characters (the catalog derives a callable name).
 * - `description`: at most 8192 characters.
 * - `inputSchema`: a JSON schema object, default `{type:"object"}`; `outputSchema` optional;
 *   each at most 64 KiB of serialized JSON.
 * - `endpoint`: an http or https URL (its address is checked against SPEC §10: loopback only in single mode), at most 2048 characters; without one,
 *   calls come back to the client as `pendingToolCalls`.
 * - `replaySafe`: default false. `timeoutMs`: integer 100–300000.
 * - `idempotent` (SPEC §16): default false; true says a call retried with the same `Idempotency-Key`
 *   takes effect once, so `restartSafe` cells may call it and a rebuilt run may send it again.
 */
export const ClientToolSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(MAX_CLIENT_TOOL_NAME_CHARS)
    .refine((name) => name.trim().length > 0, { message: 'name must not be blank' }),
  description: z.string().max(MAX_CLIENT_TOOL_DESCRIPTION_CHARS),
  inputSchema: JsonSchemaObjectSchema.default({ type: 'object' }),
  outputSchema: JsonSchemaObjectSchema.optional(),
  endpoint: WebhookEndpointSchema.optional(),
  replaySafe: z.boolean().optional(),
  idempotent: z.boolean().optional(),
  timeoutMs: z.number().int().min(MIN_CLIENT_TOOL_TIMEOUT_MS).max(MAX_CLIENT_TOOL_TIMEOUT_MS).optional(),
});
export type ClientTool = z.infer<typeof ClientToolSchema>;
export type ClientToolInput = z.input<typeof ClientToolSchema>;

/**
 * Who registered a client tool (SPEC §11): the role of the key whose `PUT /tools` wrote it. An
 * agent key may not change or remove an operator's tool.
 */
export const CLIENT_TOOL_REGISTRANTS = ['operator', 'agent'] as const;
export type ClientToolRegistrant = (typeof CLIENT_TOOL_REGISTRANTS)[number];

/** A client tool as the session keeps it: as registered, with who registered it (absent: an operator, as before roles). */
export type RegisteredClientTool = ClientTool & { registeredBy?: ClientToolRegistrant };

/** SPEC §11: the 403 an agent key's `PUT /tools` gets for changing or removing an operator's tool. */
export function operatorToolLockedMessage(name: string): string {
  return `code mode tool ${name} was registered by an operator; an agent key cannot change it.`;
}

/** `PUT /v1/sessions/{sid}/tools` body: replaces the session's client tools. Names are unique. */
export const ClientToolsPutSchema = z.object({
  tools: z
    .array(ClientToolSchema)
    .max(MAX_CLIENT_TOOLS)
    .superRefine((tools, ctx) => {
      const seen = new Set<string>();
      tools.forEach((tool, index) => {
        if (seen.has(tool.name)) {
          ctx.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: `duplicate client tool name: ${tool.name}`,
          });
        }
        seen.add(tool.name);
      });
    }),
});
export type ClientToolsPut = z.infer<typeof ClientToolsPutSchema>;

/**
 * What `GET /v1/sessions/{sid}/tools` lists per tool, and (without `replaySafe`) what a guest
 * handle carries. `input`/`output` are compact one-line TypeScript-style hints. Never host ids
 * or endpoints.
 */
export const HandleMetadataSchema = z.object({
  callableName: z.string(),
  toolName: z.string(),
  label: z.string().optional(),
  description: z.string(),
  source: ToolSourceSchema,
  apiPath: z.string().optional(),
  input: z.string().optional(),
  output: z.string().optional(),
  /** SPEC §18: a tenant tool, whose schemas are an operator's, so its hints are shown. Absent: untrusted. */
  trusted: z.literal(true).optional(),
});
export type HandleMetadata = z.infer<typeof HandleMetadataSchema>;
export const ToolCatalogMetadataSchema = HandleMetadataSchema.extend({ replaySafe: z.boolean() });
export type ToolCatalogMetadata = z.infer<typeof ToolCatalogMetadataSchema>;

/** `GET /v1/sessions/{sid}/tools`. */
export const ToolsViewSchema = z.object({
  catalog: z.array(ToolCatalogMetadataSchema),
  execDescription: z.string(),
});
export type ToolsView = z.infer<typeof ToolsViewSchema>;

import type { ToolCatalogMetadata } from '@codemode/contracts';
import { apiHeader } from './api-files';
import type { CatalogEntry } from './catalog-entry';
import type { JsonSchema } from './json-schema';
import { compactInputHint, compactOutputHint } from './schema-hints';

/** What a guest handle carries, and what a handle returned in a value serializes to (SPEC §4). */
export type HandleMetadata = Omit<ToolCatalogMetadata, 'replaySafe'>;

/**
 * `handle.describe()` (SPEC §4), for every handle, MCP ones included: the handle metadata, its
 * `$api` header (the tool's TypeScript declaration) and its full input and output schemas.
 */
export interface ToolDescription extends HandleMetadata {
  readonly $api: string;
  readonly parameters: JsonSchema;
  readonly outputSchema?: JsonSchema;
}

/**
 * Only trusted schemas are rendered into hints: core tools' and tenant tools' (an operator's,
 * SPEC §18). Session client and MCP schemas are untrusted, so their input shows as `unknown` and
 * their output as absent (OpenClaw does the same). Rendering is bounded either way: a schema too
 * large or deep for the compact form shows `unknown` / no output.
 */
export function inputHint(entry: CatalogEntry): string {
  return hasTrustedSchemas(entry) ? compactInputHint(entry.inputSchema) : 'unknown';
}

export function outputHint(entry: CatalogEntry): string | undefined {
  return hasTrustedSchemas(entry) ? compactOutputHint(entry.outputSchema) : undefined;
}

function hasTrustedSchemas(entry: CatalogEntry): boolean {
  return entry.source === 'openclaw' || (entry.source === 'client' && entry.trusted === true);
}

export function handleMetadata(entry: CatalogEntry): HandleMetadata {
  const output = outputHint(entry);
  return {
    callableName: entry.callableName,
    toolName: entry.toolName,
    ...(entry.label ? { label: entry.label } : {}),
    description: entry.description,
    source: entry.source,
    apiPath: entry.apiPath,
    input: inputHint(entry),
    ...(output ? { output } : {}),
    ...(entry.trusted ? { trusted: true as const } : {}),
  };
}

export function describe(entry: CatalogEntry): ToolDescription {
  return {
    ...handleMetadata(entry),
    $api: apiHeader(entry),
    parameters: entry.inputSchema ?? {},
    ...(entry.outputSchema ? { outputSchema: entry.outputSchema } : {}),
  };
}

/** One row of `GET /v1/sessions/{sid}/tools`. */
export function catalogMetadata(entry: CatalogEntry): ToolCatalogMetadata {
  return { ...handleMetadata(entry), replaySafe: entry.replaySafe };
}

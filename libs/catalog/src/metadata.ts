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
 * Only core tool schemas are rendered into hints: client and MCP schemas are untrusted, so their
 * input shows as `unknown` and their output as absent (OpenClaw does the same).
 */
export function inputHint(entry: CatalogEntry): string {
  return entry.source === 'openclaw' ? compactInputHint(entry.inputSchema) : 'unknown';
}

export function outputHint(entry: CatalogEntry): string | undefined {
  return entry.source === 'openclaw' ? compactOutputHint(entry.outputSchema) : undefined;
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

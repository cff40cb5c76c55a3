/** Tool catalog: callable names, MCP namespace identifiers, search, handle metadata, the exec
 * quick index and the guest API declaration files. Pure: no I/O. */
export * from './errors';
export type { JsonSchema } from './json-schema';
export { makeHostId, type CatalogEntry, type McpBinding, type McpToolOrigin, type ToolDefinition } from './catalog-entry';
export {
  buildCatalog,
  clientToolDefinition,
  tenantToolDefinition,
  findByCallableName,
  findByHostId,
  findByToolName,
  globalEntries,
  mcpToolDefinition,
  SOURCE_ORDER,
  type BuildCatalogOptions,
  type McpToolDescription,
  type ToolCatalog,
} from './catalog';
export { assignCallableNames, sanitizeCallableBase, selectEffectiveTools } from './callable-names';
export {
  FORBIDDEN_PATH_SEGMENTS,
  GUEST_GLOBAL_NAMES,
  RESERVED_GLOBAL_NAMES,
  RESERVED_WORDS,
  STANDARD_GLOBAL_NAMES,
} from './reserved-names';
export { assignMcpBindings, toLowerCamelIdentifier } from './mcp-names';
export { applySchemaDefaults, mapMcpArguments } from './mcp-arguments';
export { tokenize } from './tokenize';
export { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, resolveSearchLimit, searchCatalog, searchDocument, type SearchOptions } from './search';
export { catalogMetadata, describe, handleMetadata, type HandleMetadata, type ToolDescription } from './metadata';
export { compactInputHint, compactOutputHint } from './schema-hints';
export { escapeDocText, schemaToTs } from './schema-to-ts';
export {
  buildQuickIndex,
  MAX_QUICK_INDEX_CHARS,
  QUICK_INDEX_COMPLETE_FOOTER,
  QUICK_INDEX_HEADING,
  quickIndexOmittedFooter,
} from './quick-index';
export { buildExecDescription, execBudgetSentence, SHELL_FOR_HEAVY_WORK_SENTENCE, type ExecDescriptionOptions } from './exec-description';
export {
  apiFiles,
  apiFileSteps,
  apiHeader,
  apiList,
  apiRead,
  normalizeApiPath,
  withPlatformApiFiles,
  type ApiFile,
  type ApiListing,
  type McpServerInfo,
} from './api-files';
export { RESULTS_API_PATH } from './results-api';
export { AGENTS_API_PATH, NODES_API_PATH, SKILLS_API_PATH } from './platform-api';
export { platformSurface, platformSurfaces, surfaceAnsweredBy, type SurfaceOptions, type WorkerSurfaceName } from './platform-surfaces';
export { catalogTelemetry, type CatalogTelemetry } from './telemetry';
export { RepeatableCalls } from './repeatable-calls';

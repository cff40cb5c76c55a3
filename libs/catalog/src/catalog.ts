import type { ClientTool, ToolSource } from '@codemode/contracts';
import { assignCallableNames, selectEffectiveTools } from './callable-names';
import { makeHostId, type CatalogEntry, type ToolDefinition } from './catalog-entry';
import { DuplicateHostIdError } from './errors';
import type { JsonSchema } from './json-schema';
import { assignMcpBindings } from './mcp-names';

/** Catalog order of sources (SPEC §5): core tools, then MCP tools, then client tools (the tenant's before the session's, SPEC §18). */
export const SOURCE_ORDER: readonly ToolSource[] = ['openclaw', 'mcp', 'client'];

export interface ToolCatalog {
  /** Every callable tool in catalog order, with callable names and API paths assigned. */
  readonly entries: readonly CatalogEntry[];
  /** Tools hidden by a same-named client tool (or an earlier same-named tool); not callable. */
  readonly shadowed: readonly ToolDefinition[];
}

export interface BuildCatalogOptions {
  /** More global names to keep free (for guest globals added later). */
  readonly reservedNames?: Iterable<string>;
}

/**
 * Builds a session catalog from tool definitions of any source. Pure and deterministic: the same
 * definitions always give the same names, whatever order each source listed them in.
 * @throws DuplicateHostIdError when two definitions share a host id.
 */
export function buildCatalog(tools: readonly ToolDefinition[], options: BuildCatalogOptions = {}): ToolCatalog {
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.hostId)) {
      throw new DuplicateHostIdError(tool.hostId);
    }
    seen.add(tool.hostId);
  }
  const ordered = SOURCE_ORDER.flatMap((source) => tools.filter((tool) => tool.source === source));
  const { effective, shadowed } = selectEffectiveTools(ordered);
  const callableNames = assignCallableNames(effective, options.reservedNames);
  const mcpBindings = assignMcpBindings(ordered);
  const entries: CatalogEntry[] = [];
  for (const tool of ordered) {
    const mcpBinding = mcpBindings.get(tool.hostId);
    if (mcpBinding) {
      entries.push({
        ...tool,
        callableName: `MCP.${mcpBinding.serverIdentifier}.${mcpBinding.toolIdentifier}`,
        apiPath: `mcp/${mcpBinding.serverIdentifier}.d.ts`,
        mcpBinding,
      });
      continue;
    }
    const callableName = callableNames.get(tool.hostId);
    if (callableName) {
      entries.push({ ...tool, callableName, apiPath: `tools/${callableName}.d.ts` });
    }
  }
  return { entries, shadowed };
}

/** Catalog definition of a session's client tool. Its endpoint stays with the caller. */
export function clientToolDefinition(tool: ClientTool): ToolDefinition {
  return {
    hostId: makeHostId('client', 'client', tool.name),
    toolName: tool.name,
    source: 'client',
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    replaySafe: tool.replaySafe ?? false,
    ...(tool.idempotent ? { idempotent: true } : {}),
  };
}

/**
 * Catalog definition of a tenant tool (SPEC §18): a client tool whose schemas are an operator's,
 * so they are trusted (hints shown). Listed before the session's client tools, which shadow it.
 */
export function tenantToolDefinition(tool: ClientTool): ToolDefinition {
  return { ...clientToolDefinition(tool), hostId: makeHostId('client', 'tenant', tool.name), trusted: true };
}

export interface McpToolDescription {
  readonly serverName: string;
  readonly toolName: string;
  readonly description?: string;
  readonly inputSchema?: JsonSchema;
  readonly outputSchema?: JsonSchema;
  /** SPEC §16: its annotations say `idempotentHint: true`, or the server's config lists it in `idempotentTools`. */
  readonly idempotent?: boolean;
}

/** Catalog definition of one tool an MCP server lists. MCP tools are never replay-safe; some are idempotent. */
export function mcpToolDefinition(tool: McpToolDescription): ToolDefinition {
  return {
    hostId: makeHostId('mcp', tool.serverName, tool.toolName),
    toolName: tool.toolName,
    source: 'mcp',
    description: tool.description ?? '',
    ...(tool.inputSchema ? { inputSchema: tool.inputSchema } : {}),
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    replaySafe: false,
    ...(tool.idempotent ? { idempotent: true } : {}),
    mcp: { serverName: tool.serverName, toolName: tool.toolName },
  };
}

/** Entry bound to a callable name (a global or an `MCP.<server>.<tool>` path). */
export function findByCallableName(entries: readonly CatalogEntry[], callableName: string): CatalogEntry | undefined {
  return entries.find((entry) => entry.callableName === callableName);
}

/** Entry routed by host id. */
export function findByHostId(entries: readonly CatalogEntry[], hostId: string): CatalogEntry | undefined {
  return entries.find((entry) => entry.hostId === hostId);
}

/** First entry of a source with this tool name (e.g. the core `process` tool's callable name). */
export function findByToolName(entries: readonly CatalogEntry[], toolName: string, source?: ToolSource): CatalogEntry | undefined {
  return entries.find((entry) => entry.toolName === toolName && (source === undefined || entry.source === source));
}

/** Entries bound as guest globals: core and client tools (`catalog.all()`). */
export function globalEntries(entries: readonly CatalogEntry[]): CatalogEntry[] {
  return entries.filter((entry) => entry.source !== 'mcp');
}

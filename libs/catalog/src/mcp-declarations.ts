import type { CatalogEntry } from './catalog-entry';
import { isRecord, schemaProperties } from './json-schema';
import type { mcpServers } from './mcp-prompt';
import { docComment, escapeDocText, inputIsOptional, schemaToTs } from './schema-to-ts';

/**
 * TypeScript declarations of the guest `MCP` namespace (`mcp/index.d.ts`, `mcp/<server>.d.ts`).
 * A call resolves to the server's CallToolResult (an `isError` result rejects instead, SPEC §5);
 * a tool that declares an output schema gets its `structuredContent` typed from it.
 */

/** Extra facts about configured MCP servers, keyed by configured server name. */
export interface McpServerInfo {
  readonly name: string;
  readonly description?: string;
}

const MCP_RESULT_TYPES = [
  "/** What an MCP tool call resolves to: the server's CallToolResult (an isError result rejects instead). */",
  'type McpToolResult = {',
  '  content: unknown[];',
  '  structuredContent?: unknown;',
  '  isError?: boolean;',
  '};',
  '/** The result of a tool with an output schema: its structuredContent follows that schema. */',
  'type McpStructuredToolResult<Structured> = {',
  '  content: unknown[];',
  '  structuredContent: Structured;',
  '  isError?: boolean;',
  '};',
].join('\n');

/** MCP inputs get top-level schema defaults filled in, so defaulted fields are optional to callers. */
function mcpInputSchema(schema: unknown): unknown {
  if (!isRecord(schema) || !Array.isArray(schema.required)) {
    return schema;
  }
  const properties = schemaProperties(schema);
  const required = schema.required.filter((key) => {
    const property = typeof key === 'string' ? properties[key] : undefined;
    return !(isRecord(property) && Object.hasOwn(property, 'default'));
  });
  return { ...schema, required };
}

function defaultsDoc(schema: unknown): string[] {
  return Object.entries(schemaProperties(schema)).flatMap(([name, property]) =>
    isRecord(property) && Object.hasOwn(property, 'default')
      ? [`@param input.${name} defaults to ${JSON.stringify(property.default) ?? 'undefined'}.`]
      : [],
  );
}

function resultType(entry: CatalogEntry, indent: string): string {
  return entry.outputSchema ? `McpStructuredToolResult<${schemaToTs(entry.outputSchema, indent)}>` : 'McpToolResult';
}

/** One tool's JSDoc and `function` line inside its server's namespace block (indented by two). */
export function mcpToolDeclaration(entry: CatalogEntry): string[] {
  const binding = entry.mcpBinding;
  if (!binding) {
    return [];
  }
  const schema = mcpInputSchema(entry.inputSchema);
  const optional = inputIsOptional(schema) ? '?' : '';
  const notes = [entry.description, `MCP tool ${JSON.stringify(binding.toolName)}.`, ...defaultsDoc(entry.inputSchema)].join('\n');
  const input = entry.inputSchema ? schemaToTs(schema, '  ') : 'Record<string, unknown>';
  return [
    ...docComment(notes, '  '),
    `  function ${binding.toolIdentifier}(input${optional}: ${input}): Promise<${resultType(entry, '  ')}>;`,
  ];
}

/** The `$api` header of an MCP handle's `describe()`: its declaration inside its namespace. */
export function mcpToolApiHeader(entry: CatalogEntry): string {
  const binding = entry.mcpBinding;
  return binding ? [`declare namespace MCP.${binding.serverIdentifier} {`, ...mcpToolDeclaration(entry), '}'].join('\n') : '';
}

/** Content of `mcp/<server>.d.ts`: the result types, the server's description and its tools by name. */
export function mcpServerDeclarations(
  identifier: string,
  serverName: string,
  tools: readonly CatalogEntry[],
  info?: McpServerInfo,
): string {
  const lines = [
    MCP_RESULT_TYPES,
    '',
    ...docComment(info?.description ?? `MCP server ${serverName}.`),
    `declare namespace MCP.${identifier} {`,
  ];
  const sorted = [...tools].sort((left, right) => (left.callableName < right.callableName ? -1 : 1));
  for (const entry of sorted) {
    if (entry.mcpBinding) {
      lines.push('', ...mcpToolDeclaration(entry));
    }
  }
  lines.push('}', '');
  return lines.join('\n');
}

/** Content of `mcp/index.d.ts`: references to each server file and the server list. */
export function mcpIndexDeclarations(servers: ReturnType<typeof mcpServers>): string {
  return [
    ...servers.map((server) => `/// <reference path="./${server.identifier}.d.ts" />`),
    '',
    '/**',
    ' * MCP server tools grouped by server. Call MCP.<server>.<tool>({ ...input }) with one object',
    ' * argument; top-level schema defaults are applied and missing required fields reject.',
    ' * Servers:',
    ...servers.map((server) => ` * - ${server.identifier}: ${escapeDocText(server.serverName)} (${server.toolCount} tools)`),
    ' */',
    'declare namespace MCP {}',
    '/** Namespace name → namespace object; today only MCP. */',
    'declare const namespaces: { readonly MCP: typeof MCP };',
    '',
  ].join('\n');
}

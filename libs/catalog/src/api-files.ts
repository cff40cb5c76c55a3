import type { CatalogEntry } from './catalog-entry';
import { ApiFileNotFoundError, ApiPathTraversalError, ApiPathTypeError } from './errors';
import { isRecord, schemaProperties } from './json-schema';
import { mcpServers } from './mcp-prompt';
import { RESULTS_API_CONTENT, RESULTS_API_DESCRIPTION, RESULTS_API_PATH } from './results-api';
import { docComment, inputIsOptional, schemaToTs } from './schema-to-ts';

/** One generated declaration file (SPEC §4 `API.read`). */
export interface ApiFile {
  readonly path: string;
  readonly description: string;
  readonly content: string;
  readonly bytes: number;
}

export interface ApiListing {
  readonly files: Array<{ path: string; description: string; bytes: number }>;
}

/** Extra facts about configured MCP servers, keyed by configured server name. */
export interface McpServerInfo {
  readonly name: string;
  readonly description?: string;
}

function file(path: string, description: string, content: string): ApiFile {
  return { path, description, content, bytes: Buffer.byteLength(content, 'utf8') };
}

function typeName(callableName: string, suffix: string): string {
  return `${callableName.charAt(0).toUpperCase()}${callableName.slice(1)}${suffix}`;
}

function toolFile(entry: CatalogEntry): ApiFile {
  const input = typeName(entry.callableName, 'Input');
  const output = typeName(entry.callableName, 'Output');
  const optional = inputIsOptional(entry.inputSchema) ? '?' : '';
  const notes = [
    entry.description,
    `Tool ${JSON.stringify(entry.toolName)} (${entry.source}${entry.replaySafe ? ', replay-safe' : ''}).`,
  ].join('\n');
  const content = [
    `type ${input} = ${entry.inputSchema ? schemaToTs(entry.inputSchema) : 'Record<string, unknown>'};`,
    `type ${output} = ${entry.outputSchema ? schemaToTs(entry.outputSchema) : 'unknown'};`,
    '',
    ...docComment(notes),
    `declare function ${entry.callableName}(input${optional}: ${input}): Promise<${output}>;`,
    '',
  ].join('\n');
  return file(entry.apiPath, `Declaration of the ${entry.callableName} tool global.`, content);
}

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

const MCP_RESULT_TYPE = [
  '/** What an MCP tool call resolves to: the server\'s CallToolResult. */',
  'type McpToolResult = {',
  '  content: unknown[];',
  '  structuredContent?: unknown;',
  '  isError?: boolean;',
  '};',
].join('\n');

function mcpServerFile(identifier: string, serverName: string, tools: readonly CatalogEntry[], info?: McpServerInfo): ApiFile {
  const lines = [MCP_RESULT_TYPE, '', ...docComment(info?.description ?? `MCP server ${serverName}.`), `declare namespace MCP.${identifier} {`];
  const sorted = [...tools].sort((left, right) => (left.callableName < right.callableName ? -1 : 1));
  for (const entry of sorted) {
    const binding = entry.mcpBinding;
    if (!binding) {
      continue;
    }
    const schema = mcpInputSchema(entry.inputSchema);
    const optional = inputIsOptional(schema) ? '?' : '';
    const notes = [entry.description, `MCP tool ${JSON.stringify(binding.toolName)}.`, ...defaultsDoc(entry.inputSchema)].join('\n');
    lines.push(
      '',
      ...docComment(notes, '  '),
      `  function ${binding.toolIdentifier}(input${optional}: ${entry.inputSchema ? schemaToTs(schema, '  ') : 'Record<string, unknown>'}): Promise<McpToolResult>;`,
    );
  }
  lines.push('}', '');
  return file(`mcp/${identifier}.d.ts`, `MCP server declaration for ${serverName}.`, lines.join('\n'));
}

function mcpIndexFile(servers: ReturnType<typeof mcpServers>): ApiFile {
  const content = [
    ...servers.map((server) => `/// <reference path="./${server.identifier}.d.ts" />`),
    '',
    '/**',
    ' * MCP server tools grouped by server. Call MCP.<server>.<tool>({ ...input }) with one object',
    ' * argument; top-level schema defaults are applied and missing required fields reject.',
    ' * Servers:',
    ...servers.map((server) => ` * - ${server.identifier}: ${server.serverName.replace(/\*\//gu, '* /')} (${server.toolCount} tools)`),
    ' */',
    'declare namespace MCP {}',
    '/** Namespace name → namespace object; today only MCP. */',
    'declare const namespaces: { readonly MCP: typeof MCP };',
    '',
  ].join('\n');
  return file('mcp/index.d.ts', 'Root MCP namespace declaration and server list.', content);
}

/**
 * The virtual declaration files of a catalog: `results.d.ts`, `tools/<callableName>.d.ts` per
 * tool global, and `mcp/index.d.ts` plus `mcp/<server>.d.ts` when MCP tools exist.
 */
export function apiFiles(entries: readonly CatalogEntry[], serverInfo: readonly McpServerInfo[] = []): ApiFile[] {
  const files = [file(RESULTS_API_PATH, RESULTS_API_DESCRIPTION, RESULTS_API_CONTENT)];
  const globals = entries
    .filter((entry) => entry.source !== 'mcp')
    .sort((left, right) => (left.callableName < right.callableName ? -1 : 1));
  files.push(...globals.map(toolFile));
  const servers = mcpServers(entries);
  if (servers.length > 0) {
    files.push(mcpIndexFile(servers));
    for (const server of servers) {
      const tools = entries.filter((entry) => entry.mcpBinding?.serverIdentifier === server.identifier);
      const info = serverInfo.find((candidate) => candidate.name === server.serverName);
      files.push(mcpServerFile(server.identifier, server.serverName, tools, info));
    }
  }
  return files;
}

/** Normalizes a guest path: strips `./` and leading `/`; rejects `..` segments. */
export function normalizeApiPath(path: unknown): string {
  if (typeof path !== 'string') {
    throw new ApiPathTypeError();
  }
  const segments = path.trim().split('/');
  if (segments.some((segment) => segment === '..')) {
    throw new ApiPathTraversalError(path);
  }
  return segments.filter((segment) => segment !== '' && segment !== '.').join('/');
}

/** `API.list(prefix?)`: files whose path starts with the prefix (all when absent). */
export function apiList(files: readonly ApiFile[], prefix?: unknown): ApiListing {
  const normalized = prefix === undefined || prefix === null ? '' : normalizeApiPath(prefix);
  return {
    files: files
      .filter((candidate) => candidate.path.startsWith(normalized))
      .map(({ path, description, bytes }) => ({ path, description, bytes })),
  };
}

/** `API.read(path)`: one file. @throws ApiPathTraversalError, ApiFileNotFoundError */
export function apiRead(files: readonly ApiFile[], path: unknown): ApiFile {
  const normalized = normalizeApiPath(path);
  const found = files.find((candidate) => candidate.path === normalized);
  if (!found) {
    throw new ApiFileNotFoundError(typeof path === 'string' ? path : normalized);
  }
  return { ...found };
}

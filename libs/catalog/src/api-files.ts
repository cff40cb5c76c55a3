import type { CatalogEntry } from './catalog-entry';
import { ApiFileNotFoundError, ApiPathTraversalError, ApiPathTypeError } from './errors';
import { mcpIndexDeclarations, mcpServerDeclarations, mcpToolApiHeader, type McpServerInfo } from './mcp-declarations';
import { mcpServers } from './mcp-prompt';
import { platformApiFiles } from './platform-api';
import { RESULTS_API_CONTENT, RESULTS_API_DESCRIPTION, RESULTS_API_PATH } from './results-api';
import { docComment, inputIsOptional, schemaToTs } from './schema-to-ts';

export type { McpServerInfo } from './mcp-declarations';

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

function file(path: string, description: string, content: string): ApiFile {
  return { path, description, content, bytes: Buffer.byteLength(content, 'utf8') };
}

function typeName(callableName: string, suffix: string): string {
  return `${callableName.charAt(0).toUpperCase()}${callableName.slice(1)}${suffix}`;
}

/** Content of `tools/<callableName>.d.ts`: the input and output types and the declared global. */
function toolDeclarations(entry: CatalogEntry): string {
  const input = typeName(entry.callableName, 'Input');
  const output = typeName(entry.callableName, 'Output');
  const optional = inputIsOptional(entry.inputSchema) ? '?' : '';
  const notes = [
    entry.description,
    `Tool ${JSON.stringify(entry.toolName)} (${entry.source}${entry.replaySafe ? ', replay-safe' : ''}).`,
  ].join('\n');
  return [
    `type ${input} = ${entry.inputSchema ? schemaToTs(entry.inputSchema) : 'Record<string, unknown>'};`,
    `type ${output} = ${entry.outputSchema ? schemaToTs(entry.outputSchema) : 'unknown'};`,
    '',
    ...docComment(notes),
    `declare function ${entry.callableName}(input${optional}: ${input}): Promise<${output}>;`,
    '',
  ].join('\n');
}

/**
 * The `$api` header a handle's `describe()` carries (SPEC §4): the tool's TypeScript declaration
 * as its `apiPath` file states it (for an MCP tool, its own function inside `MCP.<server>`).
 */
export function apiHeader(entry: CatalogEntry): string {
  return entry.mcpBinding ? mcpToolApiHeader(entry) : toolDeclarations(entry).trimEnd();
}

/**
 * The virtual declaration files of a catalog: `results.d.ts`, `tools/<callableName>.d.ts` per
 * tool global, and `mcp/index.d.ts` plus `mcp/<server>.d.ts` when MCP tools exist.
 */
export function apiFiles(entries: readonly CatalogEntry[], serverInfo: readonly McpServerInfo[] = []): ApiFile[] {
  return [...apiFileSteps(entries, serverInfo)];
}

/**
 * {@link apiFiles} one file per step, for a caller that yields between them: a registration's
 * 512 tools at the schema caps take ~100 ms to declare (SPEC §10 "Event loops").
 */
export function* apiFileSteps(entries: readonly CatalogEntry[], serverInfo: readonly McpServerInfo[] = []): Generator<ApiFile> {
  yield file(RESULTS_API_PATH, RESULTS_API_DESCRIPTION, RESULTS_API_CONTENT);
  const globals = entries
    .filter((entry) => entry.source !== 'mcp')
    .sort((left, right) => (left.callableName < right.callableName ? -1 : 1));
  for (const entry of globals) {
    yield file(entry.apiPath, `Declaration of the ${entry.callableName} tool global.`, toolDeclarations(entry));
  }
  const servers = mcpServers(entries);
  if (servers.length === 0) return;
  yield file('mcp/index.d.ts', 'Root MCP namespace declaration and server list.', mcpIndexDeclarations(servers));
  for (const server of servers) {
    const tools = entries.filter((entry) => entry.mcpBinding?.serverIdentifier === server.identifier);
    const info = serverInfo.find((candidate) => candidate.name === server.serverName);
    const content = mcpServerDeclarations(server.identifier, server.serverName, tools, info);
    yield file(`mcp/${server.identifier}.d.ts`, `MCP server declaration for ${server.serverName}.`, content);
  }
}

const PLATFORM_FILES = platformApiFiles({ agents: false }).map(({ path, description, content }) => file(path, description, content));
const PLATFORM_FILES_WITH_AGENTS = platformApiFiles({ agents: true }).map(({ path, description, content }) =>
  file(path, description, content),
);

/**
 * A session's API files: its catalog's (`apiFiles`) and SPEC §15's platform surfaces'
 * (`nodes.d.ts`, `skills.d.ts`, and `agents.d.ts` when the session has `agents: true`).
 */
export function withPlatformApiFiles(catalogFiles: readonly ApiFile[], options: { agents: boolean }): ApiFile[] {
  return [...catalogFiles, ...(options.agents ? PLATFORM_FILES_WITH_AGENTS : PLATFORM_FILES)];
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

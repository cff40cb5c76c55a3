import type { ToolSource } from '@codemode/contracts';
import type { JsonSchema } from './json-schema';

/** MCP provenance of a catalog entry: the configured server and the server's own tool name. */
export interface McpToolOrigin {
  readonly serverName: string;
  readonly toolName: string;
}

/**
 * A tool as a source hands it to the catalog, before callable names are assigned.
 * `hostId` is internal routing state: it never reaches the guest, its data or its errors.
 */
export interface ToolDefinition {
  readonly hostId: string;
  readonly toolName: string;
  readonly source: ToolSource;
  readonly label?: string;
  readonly description: string;
  readonly inputSchema?: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly replaySafe: boolean;
  /** SPEC §16: retried with the same callKey it takes effect once; `restartSafe` cells may call it. Absent: false. */
  readonly idempotent?: boolean;
  /** SPEC §18: a tenant tool, whose schemas an operator wrote: its hints are rendered as a core tool's are. Absent: false. */
  readonly trusted?: boolean;
  readonly mcp?: McpToolOrigin;
}

/** Where an MCP tool lives in the guest `MCP` namespace. */
export interface McpBinding extends McpToolOrigin {
  /** lowerCamelCase identifier of the server: `MCP.<serverIdentifier>`. */
  readonly serverIdentifier: string;
  /** lowerCamelCase identifier of the tool inside its server. */
  readonly toolIdentifier: string;
}

/** One tool in a session's catalog, with its guest-visible names. */
export interface CatalogEntry extends ToolDefinition {
  /** Global name (`read`, `process_1a2b3c4d`) or namespace path (`MCP.github.createIssue`). */
  readonly callableName: string;
  /** Virtual declaration file describing this tool (`tools/<callableName>.d.ts`, `mcp/<server>.d.ts`). */
  readonly apiPath: string;
  readonly mcpBinding?: McpBinding;
}

/** Host id of a tool, `<source>:<owner>:<name>` as OpenClaw builds catalog ids: core tools are
 * owned by `core`, MCP tools by their server, session client tools by `client`, tenant tools by `tenant`. Callable-name suffixes
 * hash this id, so it must be stable for a given tool. */
export function makeHostId(source: ToolSource, owner: string, toolName: string): string {
  return `${source}:${owner}:${toolName}`;
}

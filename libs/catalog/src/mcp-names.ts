import type { McpBinding, ToolDefinition } from './catalog-entry';
import { FORBIDDEN_PATH_SEGMENTS, GUEST_GLOBAL_NAMES, RESERVED_WORDS } from './reserved-names';

/**
 * Identifiers of the guest `MCP` namespace (SPEC §5): `MCP.<server>.<tool>`, each a
 * lowerCamelCase identifier (`create_issue` → `createIssue`). A reserved word, a guest global or
 * a name already used in the same scope gets the next free numeric suffix from 2 (`delete2`),
 * as OpenClaw does, because API declarations render them as function and namespace names.
 */

/** Identifiers every server keeps free for namespace helpers (as OpenClaw reserves them). */
const SERVER_HELPER_IDENTIFIERS = ['$api', 'resources', 'prompts'];

const RESERVED_NAMESPACE_IDENTIFIERS: ReadonlySet<string> = new Set([
  ...RESERVED_WORDS,
  ...GUEST_GLOBAL_NAMES,
  ...FORBIDDEN_PATH_SEGMENTS,
  'globalThis',
]);

/** lowerCamelCase identifier from arbitrary text; `fallback` when nothing usable remains. */
export function toLowerCamelIdentifier(value: string, fallback: string): string {
  const words = value
    .trim()
    .split(/[^A-Za-z0-9]+/u)
    .filter(Boolean);
  const joined = words
    .map((word, index) => (index === 0 ? word.charAt(0).toLowerCase() + word.slice(1) : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('');
  // Identifiers cannot start with a digit: drop leading digits rather than prefixing, so
  // `2fa_check` reads as `faCheck` and stays short.
  const safe = joined.replace(/^[^A-Za-z_$]+/u, '');
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/u.test(safe) ? safe : fallback;
}

/** `base`, else `base2`, `base3`, … — the first not used and not reserved. Records the choice. */
export function uniqueIdentifier(base: string, used: Set<string>): string {
  let candidate = base;
  for (let index = 2; used.has(candidate) || RESERVED_NAMESPACE_IDENTIFIERS.has(candidate); index += 1) {
    candidate = `${base}${index}`;
  }
  used.add(candidate);
  return candidate;
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Assigns server and tool identifiers to MCP tools. Returns host id → binding. Servers are named
 * in sorted server-name order and tools in host-id order, so identifiers do not depend on the
 * order the servers answered in.
 */
export function assignMcpBindings(tools: readonly ToolDefinition[]): Map<string, McpBinding> {
  const mcpTools = tools
    .filter((tool): tool is ToolDefinition & { mcp: NonNullable<ToolDefinition['mcp']> } => tool.source === 'mcp' && !!tool.mcp)
    .sort((left, right) => compareText(left.hostId, right.hostId));
  const serverNames = [...new Set(mcpTools.map((tool) => tool.mcp.serverName))].sort(compareText);
  const usedServers = new Set<string>();
  const serverIdentifiers = new Map<string, string>();
  for (const serverName of serverNames) {
    serverIdentifiers.set(serverName, uniqueIdentifier(toLowerCamelIdentifier(serverName, 'server'), usedServers));
  }
  const usedTools = new Map<string, Set<string>>();
  const bindings = new Map<string, McpBinding>();
  for (const tool of mcpTools) {
    const serverIdentifier = serverIdentifiers.get(tool.mcp.serverName) ?? 'server';
    let used = usedTools.get(serverIdentifier);
    if (!used) {
      used = new Set(SERVER_HELPER_IDENTIFIERS);
      usedTools.set(serverIdentifier, used);
    }
    bindings.set(tool.hostId, {
      serverName: tool.mcp.serverName,
      toolName: tool.mcp.toolName,
      serverIdentifier,
      toolIdentifier: uniqueIdentifier(toLowerCamelIdentifier(tool.mcp.toolName, 'tool'), used),
    });
  }
  return bindings;
}

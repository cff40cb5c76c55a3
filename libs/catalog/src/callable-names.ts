import { createHash } from 'node:crypto';
import type { ToolDefinition } from './catalog-entry';
import { CallableNameAllocationError } from './errors';
import { RESERVED_GLOBAL_NAMES, RESERVED_WORDS } from './reserved-names';

/**
 * Callable names of non-MCP tools (SPEC §5), as OpenClaw assigns them:
 * - characters outside `[A-Za-z0-9_$]` become `_`; a bad first character or a `__openclaw`
 *   prefix gets `tool_`;
 * - reserved words, guest/standard globals and names already taken get `_` plus the first 8 hex
 *   digits of sha256(host id), lengthened 2 digits at a time until free;
 * - exact names win: a tool whose name is already its sanitized form claims it before a tool
 *   that only sanitizes to it (`list_url` beats `list-url`);
 * - a client tool shadows a non-client tool of the same name (the shadowed tool gets no global).
 */

export function sanitizeCallableBase(name: string): string {
  const normalized = name.replace(/[^A-Za-z0-9_$]/g, '_');
  return /^[A-Za-z_$]/.test(normalized) && !normalized.startsWith('__openclaw') ? normalized : `tool_${normalized}`;
}

export function suffixedCallableName(base: string, hostId: string, used: ReadonlySet<string>): string {
  const digest = createHash('sha256').update(hostId).digest('hex');
  for (let length = 8; length <= digest.length; length += 2) {
    const candidate = `${base}_${digest.slice(0, length)}`;
    if (!used.has(candidate) && !RESERVED_WORDS.has(candidate)) {
      return candidate;
    }
  }
  throw new CallableNameAllocationError(base);
}

export interface ShadowingResult<T extends ToolDefinition> {
  /** Tools that get a global, in input order. */
  readonly effective: T[];
  /** Tools hidden by a same-named winner (a client tool, or an earlier tool of the same source). */
  readonly shadowed: T[];
}

/** Resolves same-name conflicts among non-MCP tools: client wins over non-client, else first wins. */
export function selectEffectiveTools<T extends ToolDefinition>(tools: readonly T[]): ShadowingResult<T> {
  const winners = new Map<string, T>();
  for (const tool of tools) {
    if (tool.source === 'mcp') {
      continue;
    }
    const current = winners.get(tool.toolName);
    // A session's client tool shadows a tenant tool (listed before it, SPEC §18) as it does a core one.
    if (!current || (tool.source === 'client' && (current.source !== 'client' || (current.trusted === true && !tool.trusted)))) {
      winners.set(tool.toolName, tool);
    }
  }
  const kept = new Set(winners.values());
  return {
    effective: tools.filter((tool) => kept.has(tool)),
    shadowed: tools.filter((tool) => tool.source !== 'mcp' && !kept.has(tool)),
  };
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Assigns callable names to already de-shadowed non-MCP tools. Returns host id → callable name.
 * Deterministic: the result depends only on the set of (name, host id) pairs.
 */
export function assignCallableNames(tools: readonly ToolDefinition[], extraReserved: Iterable<string> = []): Map<string, string> {
  const used = new Set<string>([...RESERVED_GLOBAL_NAMES, ...extraReserved]);
  const candidates = tools
    .map((tool) => {
      const base = sanitizeCallableBase(tool.toolName);
      const keepsExactName = tool.toolName === base && !RESERVED_WORDS.has(base) && !used.has(base);
      return { tool, base, keepsExactName };
    })
    .sort(
      (left, right) =>
        Number(right.keepsExactName) - Number(left.keepsExactName) ||
        compareText(left.base, right.base) ||
        compareText(left.tool.hostId, right.tool.hostId),
    );
  const names = new Map<string, string>();
  for (const { tool, base } of candidates) {
    const callableName = RESERVED_WORDS.has(base) || used.has(base) ? suffixedCallableName(base, tool.hostId, used) : base;
    used.add(callableName);
    names.set(tool.hostId, callableName);
  }
  return names;
}

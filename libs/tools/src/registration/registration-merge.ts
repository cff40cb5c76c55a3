import { MAX_CLIENT_TOOLS, type ClientTool, type ClientToolRegistrant, type RegisteredClientTool } from '@codemode/contracts';
import { OperatorToolLockedError, TooManyClientToolsError } from '../errors';

/**
 * What an agent key may not change of an operator's tool (SPEC §11): where its calls go and what
 * they carry and may be retried as (`replaySafe`, and `idempotent` of SPEC §16).
 */
const OPERATOR_FIELDS = ['endpoint', 'inputSchema', 'outputSchema', 'replaySafe', 'idempotent'] as const;

/**
 * The session's client tools after a `PUT /tools` by a key of role `by` (SPEC §5, §11). An
 * operator's PUT replaces the list, every tool now the operator's. An agent's PUT keeps the
 * operator's tools as they are (listed or not, whatever their description or timeout says) and
 * replaces only the agent's own; naming an operator's tool with another endpoint, schema,
 * `replaySafe` or `idempotent` is refused, and so is naming one of the tenant's tools (SPEC §18:
 * an agent never re-points an operator's tool) that no operator's session tool shadows.
 * @throws OperatorToolLockedError, TooManyClientToolsError (the operator's tools and the agent's over MAX_CLIENT_TOOLS)
 */
export function mergeRegistration(
  current: readonly RegisteredClientTool[],
  submitted: readonly ClientTool[],
  by: ClientToolRegistrant,
  tenantToolNames: ReadonlySet<string> = new Set(),
): RegisteredClientTool[] {
  if (by === 'operator') return submitted.map((tool) => ({ ...tool, registeredBy: 'operator' }));
  const operators = new Map(current.filter(isOperatorTool).map((tool) => [tool.name, tool]));
  const own: RegisteredClientTool[] = [];
  for (const tool of submitted) {
    const operatorTool = operators.get(tool.name);
    if (operatorTool === undefined) {
      if (tenantToolNames.has(tool.name)) throw new OperatorToolLockedError(tool.name);
      own.push({ ...tool, registeredBy: 'agent' });
    } else if (OPERATOR_FIELDS.some((field) => !sameJson(fieldOf(operatorTool, field), fieldOf(tool, field)))) {
      throw new OperatorToolLockedError(tool.name);
    }
  }
  const merged = [...operators.values(), ...own];
  if (merged.length > MAX_CLIENT_TOOLS) throw new TooManyClientToolsError(operators.size);
  return merged;
}

/** A tool stored before keys had roles counts as an operator's: it stays protected. */
export function isOperatorTool(tool: RegisteredClientTool): boolean {
  return tool.registeredBy !== 'agent';
}

function fieldOf(tool: ClientTool, field: (typeof OPERATOR_FIELDS)[number]): unknown {
  return (tool as Record<string, unknown>)[field];
}

/** Equal as JSON values: objects by their members whatever their order (a re-sent schema may list keys otherwise). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  const left = Object.entries(a as Record<string, unknown>).filter(([, value]) => value !== undefined);
  const right = b as Record<string, unknown>;
  const rightCount = Object.values(right).filter((value) => value !== undefined).length;
  return left.length === rightCount && left.every(([key, value]) => Object.hasOwn(right, key) && sameJson(value, right[key]));
}

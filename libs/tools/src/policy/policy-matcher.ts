import type { Policy, PolicyDecision, PolicyRule } from '@codemode/contracts';

/**
 * The policy a session's cells run under (SPEC §11): the tenant's rules followed by the session's,
 * so that between two equally specific rules the session's (the later one) wins; the session's
 * `default` over the tenant's, `allow` when neither sets one.
 */
export function mergePolicies(tenant: Policy | null, session: Policy | null): Policy {
  const rules = [...(tenant?.rules ?? []), ...(session?.rules ?? [])];
  const fallback = session?.default ?? tenant?.default;
  return fallback === undefined ? { rules } : { rules, default: fallback };
}

/**
 * The decision for a call of the tool whose policy name is `tool`: the most specific matching rule
 * wins (an exact name over any glob, a longer glob over a shorter one, the later of two equal
 * ones); no match → the policy's default, `allow` when it has none.
 */
export function decideTool(policy: Policy, tool: string): PolicyDecision {
  let best: { rule: PolicyRule; rank: number } | undefined;
  for (const rule of policy.rules) {
    if (!ruleMatches(rule.tool, tool)) continue;
    const rank = specificity(rule.tool);
    if (!best || rank >= best.rank) best = { rule, rank };
  }
  return best?.rule.decision ?? policy.default ?? 'allow';
}

/** An exact name outranks every glob; globs rank by their length. */
function specificity(pattern: string): number {
  return pattern.includes('*') ? pattern.length : Number.MAX_SAFE_INTEGER;
}

function ruleMatches(pattern: string, tool: string): boolean {
  if (!pattern.includes('*')) return pattern === tool;
  return globMatches(pattern.split('*'), tool);
}

/**
 * `*` matches any run of characters (dots included, so `MCP.*` covers every MCP tool). Linear in
 * the name's length per literal part: the literal parts are found left to right, the first
 * anchored at the start and the last at the end.
 */
function globMatches(parts: string[], tool: string): boolean {
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!tool.startsWith(first)) return false;
  if (tool.length < first.length + last.length || !tool.endsWith(last)) return false;
  let at = first.length;
  const end = tool.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = tool.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

import type { GuestCatalog } from '@codemode/contracts';

/**
 * SPEC §5, §12, §16: which tool calls of a run may be made again — a second call changes nothing
 * the run already saw, or takes effect once (same callKey). Replay-safe or idempotent tool
 * globals, replay-safe platform surfaces (SPEC §15: `skills.*` may, `agents.run` may not) and
 * idempotent MCP tools, as the run's guest catalog lists them. The one owner of that rule: the
 * sandbox asks it before a `restartSafe` cell's call is dispatched, a restore asks it for each
 * call that was in flight at the park, and the worker's tool-call pipeline asks which calls change
 * nothing (`changesNothing`), to record them once they answered.
 */
export class RepeatableCalls {
  /** Globals and surfaces by callable name. */
  private readonly globals: ReadonlySet<string>;
  /** Of those, the replay-safe ones: a second call changes nothing at all (an idempotent one takes effect, once). */
  private readonly unchanging: ReadonlySet<string>;
  /** MCP tools by `mcpToolKey`. */
  private readonly mcp: ReadonlySet<string>;

  constructor(catalog: Partial<GuestCatalog>) {
    const globals = (catalog.globals ?? []).filter((tool) => tool.replaySafe || tool.idempotent === true);
    const surfaces = (catalog.surfaces ?? []).filter((surface) => surface.replaySafe).map((surface) => surface.name);
    this.globals = new Set([...globals.map((tool) => tool.metadata.callableName), ...surfaces]);
    this.unchanging = new Set([...globals.filter((tool) => tool.replaySafe).map((tool) => tool.metadata.callableName), ...surfaces]);
    this.mcp = new Set(
      (catalog.mcp ?? []).flatMap((server) =>
        server.tools.filter((tool) => tool.idempotent === true).map((tool) => mcpToolKey(server.serverName, tool.metadata.toolName)),
      ),
    );
  }

  /** From the catalog's JSON text, as a cell request carries it (absent: nothing is repeatable). */
  static fromJson(catalogJson: string | undefined): RepeatableCalls {
    return new RepeatableCalls(catalogJson === undefined ? {} : (JSON.parse(catalogJson) as Partial<GuestCatalog>));
  }

  /**
   * A tool call (`callValue` with `{tool}`, `namespace` with `{server, tool}`) may be made again.
   * Any other bridge method is not a tool call: false (its callers decide those by method).
   */
  toolCall(method: string, args: unknown): boolean {
    const named = typeof args === 'object' && args !== null ? (args as { tool?: unknown; server?: unknown }) : {};
    if (typeof named.tool !== 'string') return false;
    if (method === 'callValue') return this.globals.has(named.tool);
    if (method === 'namespace') return typeof named.server === 'string' && this.mcp.has(mcpToolKey(named.server, named.tool));
    return false;
  }

  /**
   * A tool call that changes nothing, made once or many times (a replay-safe global or surface:
   * the workspace reads, `skills.read`…), so the order that protects a write — its `tool.called`
   * before it runs — protects nothing for it (SPEC §16). An idempotent tool is not one: it takes
   * effect, once per callKey. MCP tools are never (they are only ever marked idempotent).
   */
  changesNothing(method: string, args: unknown): boolean {
    const named = typeof args === 'object' && args !== null ? (args as { tool?: unknown }) : {};
    return method === 'callValue' && typeof named.tool === 'string' && this.unchanging.has(named.tool);
  }
}

function mcpToolKey(serverName: string, toolName: string): string {
  return JSON.stringify([serverName, toolName]);
}

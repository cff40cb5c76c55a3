import { createHash } from 'node:crypto';
import type { ClientTool, GuestCatalog, Telemetry, TenantTool } from '@codemode/contracts';
import {
  apiFileSteps,
  buildCatalog,
  catalogTelemetry,
  clientToolDefinition,
  globalEntries,
  handleMetadata,
  platformSurface,
  platformSurfaces,
  RepeatableCalls,
  buildExecDescription,
  catalogMetadata,
  searchCatalog,
  searchDocument,
  tenantToolDefinition,
  type SearchOptions,
  type SurfaceOptions,
  type ApiFile,
  type CatalogEntry,
  type McpServerInfo,
  type ToolDefinition,
} from '@codemode/catalog';
import { coreToolDefinitions } from './core/definitions';
import type { EventLoopSlices } from './core/event-loop-slices';
import { scopeMcpToTenant, type McpServerScope } from './mcp/mcp-tenants';

/** A session without `agents: true` (the default, SPEC §15). */
const WITHOUT_AGENTS: SurfaceOptions = { agents: false };

/**
 * One session's tool catalog as a run sees it: core tools, the deployment's MCP tools, the
 * tenant's tools (SPEC §18) and the session's client tools, named and ordered (SPEC §5), plus what the guest needs to install them.
 * Immutable once built, so one instance serves every run with the same inputs (`SessionCatalogCache`):
 * what it derives is computed on first use and kept.
 */
export class SessionToolCatalog {
  readonly entries: readonly CatalogEntry[];
  /** The client tools calls reach by name: the tenant's, and the session's over them (SPEC §18: a session's tool shadows the tenant's). */
  readonly clientTools: ReadonlyMap<string, TenantTool>;
  private readonly mcpServers: readonly McpServerInfo[];
  private files: ApiFile[] | undefined;
  private documents: string[][] | undefined;
  /** What the guest is sent, per value of `SurfaceOptions.agents` (index 1: with `agents`). */
  private readonly guest: (GuestCatalog | undefined)[] = [];
  private readonly guestJson: (string | undefined)[] = [];
  private readonly guestHash: (string | undefined)[] = [];
  private readonly repeatable: (RepeatableCalls | undefined)[] = [];

  /**
   * @param mcpTools the deployment's MCP tool definitions (`McpServers.listTools()`)
   * @param clientTools the session's registered client tools
   * @param mcpServers the deployment's connected MCP servers with their `tenants`
   * @param tenant the session's tenant: MCP servers scoped to other tenants, and their tools, are
   * left out of everything this catalog shows (entries, `MCP` namespace, search, API files)
   * @param tenantTools the tenant's tools (`PUT /v1/tools/{name}`), trusted: their hints are shown
   */
  constructor(
    mcpTools: readonly ToolDefinition[],
    clientTools: readonly ClientTool[],
    mcpServers: readonly McpServerScope[],
    tenant: string,
    tenantTools: readonly TenantTool[] = [],
  ) {
    const mcp = scopeMcpToTenant(mcpTools, mcpServers, tenant);
    this.mcpServers = mcp.servers;
    this.entries = buildCatalog([
      ...coreToolDefinitions(),
      ...mcp.tools,
      ...tenantTools.map(tenantToolDefinition),
      ...clientTools.map(clientToolDefinition),
    ]).entries;
    this.clientTools = new Map([...tenantTools, ...clientTools].map((tool) => [tool.name, tool]));
  }

  /**
   * What the sandbox installs: async globals + `catalog.all()`, the `MCP` namespace and the
   * platform surfaces the run has (SPEC §15). Shared: never mutate it.
   */
  guestCatalog(surfaces: SurfaceOptions = WITHOUT_AGENTS): GuestCatalog {
    const at = Number(surfaces.agents);
    return (this.guest[at] ??= guestCatalogOf(this.entries, surfaces));
  }

  /** `guestCatalog()` as JSON text, as a cell request carries it to the sandbox thread. */
  guestCatalogJson(surfaces: SurfaceOptions = WITHOUT_AGENTS): string {
    const at = Number(surfaces.agents);
    return (this.guestJson[at] ??= JSON.stringify(this.guestCatalog(surfaces)));
  }

  /** Which calls of a run with these surfaces may be made again (`RepeatableCalls`, over `guestCatalog()`). */
  repeatableCalls(surfaces: SurfaceOptions = WITHOUT_AGENTS): RepeatableCalls {
    const at = Number(surfaces.agents);
    return (this.repeatable[at] ??= new RepeatableCalls(this.guestCatalog(surfaces)));
  }

  /** SPEC §6: the sha256 (hex) of `guestCatalogJson()`, which a restartSafe run records and its recovery compares. */
  guestCatalogHash(surfaces: SurfaceOptions = WITHOUT_AGENTS): string {
    const at = Number(surfaces.agents);
    return (this.guestHash[at] ??= createHash('sha256').update(this.guestCatalogJson(surfaces)).digest('hex'));
  }

  /**
   * The tool global (core or client tool) a `callValue` names, else the platform surface of that
   * name the run has (SPEC §15: `skills.read`, `agents.run`, ...). A tool can never take a
   * surface's name: `nodes`, `skills` and `agents` are reserved globals, and a dotted name is
   * never a callable name.
   */
  byCallableName(name: unknown, surfaces: SurfaceOptions): CatalogEntry | undefined {
    if (typeof name !== 'string') return undefined;
    return this.entries.find((entry) => entry.callableName === name && !entry.mcpBinding) ?? platformSurface(name, surfaces);
  }

  mcpTool(serverName: unknown, toolName: unknown): CatalogEntry | undefined {
    return this.entries.find((entry) => entry.mcpBinding?.serverName === serverName && entry.mcpBinding?.toolName === toolName);
  }

  /** The callable name of a core tool (e.g. the process tool's `process_<hex>`). */
  coreCallable(toolName: string): string {
    return this.entries.find((entry) => entry.source === 'openclaw' && entry.toolName === toolName)?.callableName ?? toolName;
  }

  /**
   * The API files (`API.read`/`list`), declared once, in `slices` of the event loop: 512 tools at
   * the schema caps take ~100 ms.
   */
  async apiFiles(slices: EventLoopSlices): Promise<ApiFile[]> {
    if (this.files) return this.files;
    const files: ApiFile[] = [];
    for (const file of apiFileSteps(this.entries, this.mcpServers)) {
      files.push(file);
      await slices.pause();
    }
    this.files = files;
    return files;
  }

  /** `catalog.search` (SPEC §4) over documents indexed once, in `slices` (8 KB descriptions of 512 tools). */
  async search(query: unknown, options: SearchOptions, slices: EventLoopSlices): Promise<CatalogEntry[]> {
    if (!this.documents) {
      const documents: string[][] = [];
      for (const entry of this.entries) {
        documents.push(searchDocument(entry));
        await slices.pause();
      }
      this.documents = documents;
    }
    return searchCatalog(this.entries, query, options, this.documents);
  }

  /**
   * `GET /v1/sessions/{sid}/tools`: catalog metadata and the model-visible exec description,
   * which states the session's own wall-clock budget and output cap.
   */
  view(limits: { timeoutMs: number; maxOutputBytes: number }): { catalog: ReturnType<typeof catalogMetadata>[]; execDescription: string } {
    return { catalog: this.entries.map(catalogMetadata), execDescription: buildExecDescription(this.entries, limits) };
  }

  telemetry(counts: { searchCount: number; describeCount: number; callCount: number }): Telemetry {
    return { ...catalogTelemetry(this.entries), ...counts, counterScope: 'run', visibleTools: ['exec', 'wait'] };
  }
}

function guestCatalogOf(entries: readonly CatalogEntry[], surfaces: SurfaceOptions): GuestCatalog {
  const servers = new Map<string, GuestCatalog['mcp'][number]>();
  for (const entry of entries) {
    const binding = entry.mcpBinding;
    if (!binding) continue;
    const server = servers.get(binding.serverName) ?? {
      serverIdentifier: binding.serverIdentifier,
      serverName: binding.serverName,
      tools: [],
    };
    server.tools.push({
      toolIdentifier: binding.toolIdentifier,
      metadata: handleMetadata(entry),
      ...(entry.idempotent ? { idempotent: true } : {}),
    });
    servers.set(binding.serverName, server);
  }
  return {
    globals: globalEntries(entries).map((entry) => ({
      metadata: handleMetadata(entry),
      replaySafe: entry.replaySafe,
      ...(entry.idempotent ? { idempotent: true } : {}),
    })),
    mcp: [...servers.values()],
    surfaces: platformSurfaces(surfaces).map((entry) => ({ name: entry.callableName, replaySafe: entry.replaySafe })),
  };
}

/**
 * The guest catalog of a session with no MCP server, tenant tool or client tool: the core tools.
 * The worker's sandbox threads prepare its handles in their boot image (SandboxPoolOptions): every
 * run's core tool globals take them.
 */
export function coreGuestCatalogJson(): string {
  return new SessionToolCatalog([], [], [], '').guestCatalogJson();
}

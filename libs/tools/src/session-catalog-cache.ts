import type { ToolDefinition } from '@codemode/catalog';
import { SHARED_SLICES, type EventLoopSlices } from './core/event-loop-slices';
import type { McpServerScope } from './mcp/mcp-tenants';
import { SessionToolCatalog } from './session-tool-catalog';
import { readStoredToolList } from './stored-tool-list';
import { readTenantToolList } from './tenant-tool-list';

/** The deployment's MCP tools and servers; `version` changes whenever what `tools()` or `servers()` answer may have. */
export interface McpCatalogSource {
  readonly version: number;
  tools(): readonly ToolDefinition[];
  servers(): readonly McpServerScope[];
}

/** A session's stored client tool list, as the cache needs it: its version, and its bytes only to build. */
export interface StoredToolsSource {
  /** The list's version as the run read it (`ClientToolsLedger.version`; '' when none is stored). */
  readonly version: string;
  /** The list's bytes with the version they are at (`ClientToolsLedger.snapshot`). */
  read(): Promise<{ version: string; bytes: Buffer | null }>;
}

/** The tenant's tools (SPEC §18), as the cache needs them: their version, and their JSON only to build. */
export interface TenantToolsSource {
  /** Their version as the run read it (`TenantToolsLedger.version`; '' when none was ever stored). */
  readonly version: string;
  /** The tools with the version they are at (`TenantToolsLedger.read`). */
  read(): Promise<{ version: string; tools: [name: string, json: Buffer][] }>;
}

/** A tenant that never registered a tool. */
export const NO_TENANT_TOOLS: TenantToolsSource = { version: '', read: () => Promise.resolve({ version: '', tools: [] }) };

export interface SessionCatalogCacheOptions {
  /** Catalogs kept at most. */
  maxEntries?: number;
  /** Characters kept at most: each catalog counts its list's bytes and its guest catalog's JSON. */
  maxChars?: number;
  /** Where building yields to the event loop (the worker's tools share one). */
  slices?: EventLoopSlices;
}

// A kept catalog also holds what it derives (parsed tools and entries, API files once a guest read
// them): a few times its counted characters. Two of the largest registrations fit.
const DEFAULT_CATALOG_CACHE_ENTRIES = 128;
const DEFAULT_CATALOG_CACHE_CHARS = 40 * 1024 * 1024;

/**
 * Built session catalogs, reused across runs: a catalog is a function of the tenant, the MCP
 * snapshot, the tenant's tools and the session's client tool list, so runs with the same ones share one immutable
 * `SessionToolCatalog` instead of building it (names, hints, guest catalog, its JSON) per run.
 * The lists are named by their versions, which every registration changes: a run whose catalog is kept
 * never reads a list (up to 16 MiB), and the next run after a registration builds the new one.
 * A build reads the list in slices of the event loop (SPEC §10 "Event loops"); runs that need the
 * same catalog meanwhile wait for that one build. Least recently used catalogs go first, so many
 * sessions with distinct tools (a hostile tenant) cannot grow memory beyond both bounds.
 */
export class SessionCatalogCache {
  private readonly catalogs = new Map<string, { catalog: SessionToolCatalog; chars: number }>();
  private readonly building = new Map<string, Promise<SessionToolCatalog>>();
  private chars = 0;
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private readonly slices: EventLoopSlices;

  constructor(options: SessionCatalogCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_CATALOG_CACHE_ENTRIES;
    this.maxChars = options.maxChars ?? DEFAULT_CATALOG_CACHE_CHARS;
    this.slices = options.slices ?? SHARED_SLICES;
  }

  /** The catalog of a session of `tenant` with the client tools `tools` and the tenant's tools `tenantTools` name, under the MCP snapshot `mcp` reads now. */
  async catalog(
    tenant: string,
    tools: StoredToolsSource,
    mcp: McpCatalogSource,
    tenantTools: TenantToolsSource = NO_TENANT_TOOLS,
  ): Promise<SessionToolCatalog> {
    const key = keyOf(tenant, mcp.version, tools.version, tenantTools.version);
    const hit = this.catalogs.get(key);
    if (hit) {
      this.catalogs.delete(key);
      this.catalogs.set(key, hit);
      return hit.catalog;
    }
    const pending = this.building.get(key);
    if (pending) return pending;
    const built = this.build(tenant, tools, mcp, tenantTools).finally(() => this.building.delete(key));
    this.building.set(key, built);
    return built;
  }

  /** How many catalogs are kept. */
  get size(): number {
    return this.catalogs.size;
  }

  private async build(
    tenant: string,
    tools: StoredToolsSource,
    mcp: McpCatalogSource,
    tenantTools: TenantToolsSource,
  ): Promise<SessionToolCatalog> {
    // Kept under the versions the bytes are at: a registration between the two reads names the new list.
    const [{ version, bytes }, tenantRead] = await Promise.all([tools.read(), tenantTools.read()]);
    const clientTools = bytes === null ? [] : await readStoredToolList(bytes, this.slices);
    const tenantList = await readTenantToolList(tenantRead.tools, this.slices);
    const catalog = new SessionToolCatalog(mcp.tools(), clientTools, mcp.servers(), tenant, tenantList);
    const tenantBytes = tenantRead.tools.reduce((sum, [, json]) => sum + json.length, 0);
    const chars = (bytes?.length ?? 0) + tenantBytes + catalog.guestCatalogJson().length;
    if (chars <= this.maxChars) this.keep(keyOf(tenant, mcp.version, version, tenantRead.version), catalog, chars);
    return catalog;
  }

  private keep(key: string, catalog: SessionToolCatalog, chars: number): void {
    const replaced = this.catalogs.get(key);
    if (replaced) {
      this.catalogs.delete(key);
      this.chars -= replaced.chars;
    }
    this.catalogs.set(key, { catalog, chars });
    this.chars += chars;
    for (const [oldest, entry] of this.catalogs) {
      if (this.catalogs.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.catalogs.delete(oldest);
      this.chars -= entry.chars;
    }
  }
}

/** Self-delimiting: no tenant name can make two different inputs meet in one key. */
function keyOf(tenant: string, mcpVersion: number, toolsVersion: string, tenantToolsVersion: string): string {
  return JSON.stringify([tenant, mcpVersion, toolsVersion, tenantToolsVersion]);
}

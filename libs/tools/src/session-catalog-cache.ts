import type { ToolDefinition } from '@codemode/catalog';
import type { ClientTool } from '@codemode/contracts';
import type { McpServerScope } from './mcp/mcp-tenants';
import { SessionToolCatalog } from './session-tool-catalog';

/** The deployment's MCP tools and servers; `version` changes whenever what `tools()` or `servers()` answer may have. */
export interface McpCatalogSource {
  readonly version: number;
  tools(): readonly ToolDefinition[];
  servers(): readonly McpServerScope[];
}

export interface SessionCatalogCacheOptions {
  /** Catalogs kept at most. */
  maxEntries?: number;
  /** Characters kept at most: each catalog counts its key (the client tools' JSON) and its guest catalog's JSON. */
  maxChars?: number;
}

// A kept catalog also holds what it derives (parsed entries, API files once a guest read them): a
// few times its counted characters, so the bounds are set low.
const DEFAULT_CATALOG_CACHE_ENTRIES = 128;
const DEFAULT_CATALOG_CACHE_CHARS = 4 * 1024 * 1024;

/**
 * Built session catalogs, reused across runs: a catalog is a function of the tenant, the MCP
 * snapshot and the session's client tools, so runs with the same ones share one immutable
 * `SessionToolCatalog` instead of building it (names, hints, guest catalog, its JSON) per run.
 * A registration changes the client tools and so the key: the next run sees the new tools.
 * Least recently used catalogs go first, so many sessions with distinct tools (a hostile tenant)
 * cannot grow memory beyond both bounds.
 */
export class SessionCatalogCache {
  private readonly catalogs = new Map<string, { catalog: SessionToolCatalog; chars: number }>();
  private chars = 0;
  private readonly maxEntries: number;
  private readonly maxChars: number;

  constructor(options: SessionCatalogCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_CATALOG_CACHE_ENTRIES;
    this.maxChars = options.maxChars ?? DEFAULT_CATALOG_CACHE_CHARS;
  }

  /** The catalog of a session of `tenant` with `clientTools`, under the MCP snapshot `mcp` reads now. */
  catalog(tenant: string, clientTools: readonly ClientTool[], mcp: McpCatalogSource): SessionToolCatalog {
    const toolsJson = JSON.stringify(clientTools);
    // Self-delimiting prefix: no tenant name can make two different triples meet in one key.
    const key = JSON.stringify([tenant, mcp.version]) + toolsJson;
    const hit = this.catalogs.get(key);
    if (hit) {
      this.catalogs.delete(key);
      this.catalogs.set(key, hit);
      return hit.catalog;
    }
    const catalog = new SessionToolCatalog(mcp.tools(), clientTools, mcp.servers(), tenant);
    const chars = key.length + catalog.guestCatalogJson().length;
    if (chars <= this.maxChars) this.keep(key, catalog, chars);
    return catalog;
  }

  /** How many catalogs are kept. */
  get size(): number {
    return this.catalogs.size;
  }

  private keep(key: string, catalog: SessionToolCatalog, chars: number): void {
    this.catalogs.set(key, { catalog, chars });
    this.chars += chars;
    for (const [oldest, entry] of this.catalogs) {
      if (this.catalogs.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.catalogs.delete(oldest);
      this.chars -= entry.chars;
    }
  }
}

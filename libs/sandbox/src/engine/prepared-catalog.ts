/**
 * The host's side of a catalog prepared in a thread's boot image (`SandboxPoolOptions.preparedCatalogJson`):
 * what a run's catalog is sent into the VM as, for `defineCatalog` (tool-api.guest.js).
 *
 * The image holds one handle per global of the prepared catalog, built from its metadata. A run's
 * catalog is sent as `null` when it is the prepared text itself; otherwise each of its globals whose
 * metadata has the same JSON text as a prepared global's is sent as `{ prepared: <that global's
 * index> }`, and the others as `{ metadata }` (the one field the guest reads of a global), so the
 * guest neither parses nor builds what the image already holds. Copying a ~3.5 KB text into a VM
 * and parsing it there cost more than building the handles' globals (docs/benchmarks.md).
 */
export class PreparedCatalog {
  /** Prepared globals by their metadata's JSON text → their index in the prepared catalog. */
  private readonly indexOf = new Map<string, number>();

  constructor(readonly json: string) {
    const globals = globalsOf(JSON.parse(json));
    if (!globals) throw new TypeError('a prepared catalog needs a globals list');
    globals.forEach((global, index) => {
      const text = metadataText(global);
      if (text !== undefined && !this.indexOf.has(text)) this.indexOf.set(text, index);
    });
  }

  /**
   * What `defineCatalog` is given for `catalogJson`: null for the prepared text, else the catalog
   * with its prepared globals named by index and the others as their metadata; a text that is no
   * catalog goes as it is (the guest refuses it as before).
   */
  forGuest(catalogJson: string): string | null {
    if (catalogJson === this.json) return null;
    let catalog: unknown;
    try {
      catalog = JSON.parse(catalogJson);
    } catch {
      return catalogJson;
    }
    const globals = globalsOf(catalog);
    if (!globals) return catalogJson;
    // Every global is sent as one of the two shapes: a `prepared` the run's text held is never passed on.
    const sent = globals.map((global) => {
      const text = metadataText(global);
      const index = text === undefined ? undefined : this.indexOf.get(text);
      return index === undefined ? { metadata: (global as { metadata?: unknown } | null)?.metadata } : { prepared: index };
    });
    return JSON.stringify({ ...(catalog as object), globals: sent });
  }
}

function globalsOf(catalog: unknown): unknown[] | undefined {
  const globals = catalog !== null && typeof catalog === 'object' ? (catalog as { globals?: unknown }).globals : undefined;
  return Array.isArray(globals) ? globals : undefined;
}

/** A global's metadata as JSON text; undefined when it has none (an object). */
function metadataText(global: unknown): string | undefined {
  const metadata = global !== null && typeof global === 'object' ? (global as { metadata?: unknown }).metadata : undefined;
  return metadata !== null && typeof metadata === 'object' ? JSON.stringify(metadata) : undefined;
}

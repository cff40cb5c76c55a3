/**
 * The host's side of a catalog prepared in a thread's boot image (`SandboxPoolOptions.preparedCatalogJson`):
 * what a run's catalog is sent into the VM as, for `defineCatalog` (tool-api.guest.js).
 *
 * The image holds one handle per global of the prepared catalog, built from its metadata. A run's
 * catalog is sent as the prepared one when it is the prepared text itself; otherwise each of its
 * globals whose metadata has the same JSON text as a prepared global's is sent as `{ prepared:
 * <that global's index> }`, and the others as `{ metadata }` (the one field the guest reads of a
 * global), so the guest neither parses nor builds what the image already holds. Copying a ~3.5 KB
 * text into a VM and parsing it there cost more than building the handles' globals
 * (docs/benchmarks.md).
 */
export class PreparedCatalog {
  /** Prepared globals by their metadata's JSON text → their index in the prepared catalog. */
  private readonly indexOf = new Map<string, number>();
  /** The callable names of the prepared globals: only a global of one of them can be a prepared one. */
  private readonly names = new Set<unknown>();
  /** The last text rewritten and what it was sent as: a session's runs send the same text again and again. */
  private last: { text: string; sent: SentCatalog } | undefined;

  constructor(readonly json: string) {
    const globals = globalsOf(JSON.parse(json));
    if (!globals) throw new TypeError('a prepared catalog needs a globals list');
    globals.forEach((global, index) => {
      const metadata = metadataOf(global);
      const text = metadata && JSON.stringify(metadata);
      if (text === undefined || this.indexOf.has(text)) return;
      this.indexOf.set(text, index);
      this.names.add(metadata?.callableName);
    });
  }

  /** What `defineCatalog` is given for `catalogJson` (see SentCatalog). */
  forGuest(catalogJson: string): SentCatalog {
    if (catalogJson === this.json) return PREPARED;
    if (this.last?.text === catalogJson) return this.last.sent;
    const sent = this.rewrite(catalogJson);
    this.last = { text: catalogJson, sent };
    return sent;
  }

  private rewrite(catalogJson: string): SentCatalog {
    try {
      const catalog: unknown = JSON.parse(catalogJson);
      const globals = globalsOf(catalog);
      if (!globals) return { kind: 'as-is', text: catalogJson };
      // Every global is sent as one of the two shapes: a `prepared` the run's text held is never passed on.
      const sent = globals.map((global) => {
        const metadata = metadataOf(global);
        const index = metadata && this.names.has(metadata.callableName) ? this.indexOf.get(JSON.stringify(metadata)) : undefined;
        return index === undefined ? { metadata: (global as { metadata?: unknown } | null)?.metadata } : { prepared: index };
      });
      return { kind: 'named', text: JSON.stringify({ ...(catalog as object), globals: sent }) };
    } catch {
      // Not a catalog the host can read (the guest refuses it as before).
      return { kind: 'as-is', text: catalogJson };
    }
  }
}

/**
 * A run's catalog as `defineCatalog` gets it: the prepared one (`null`, nothing copied in), the
 * text with prepared globals named by index (the guest reads `prepared` only then), or the run's
 * own text as it is (one the host could not read as a catalog).
 */
export type SentCatalog = { kind: 'prepared' } | { kind: 'named'; text: string } | { kind: 'as-is'; text: string };

const PREPARED: SentCatalog = { kind: 'prepared' };

function globalsOf(catalog: unknown): unknown[] | undefined {
  const globals = catalog !== null && typeof catalog === 'object' ? (catalog as { globals?: unknown }).globals : undefined;
  return Array.isArray(globals) ? globals : undefined;
}

/** A global's metadata when it is an object (what a prepared global can have); else undefined. */
function metadataOf(global: unknown): { callableName?: unknown } | undefined {
  const metadata = global !== null && typeof global === 'object' ? (global as { metadata?: unknown }).metadata : undefined;
  return metadata !== null && typeof metadata === 'object' ? metadata : undefined;
}

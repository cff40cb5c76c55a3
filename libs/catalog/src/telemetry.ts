import type { Telemetry } from '@codemode/contracts';
import type { CatalogEntry } from './catalog-entry';

export type CatalogTelemetry = Pick<Telemetry, 'catalogSize' | 'sources'>;

/** Catalog size and per-source counts for a result's `telemetry`. */
export function catalogTelemetry(entries: readonly CatalogEntry[]): CatalogTelemetry {
  const sources = { openclaw: 0, mcp: 0, client: 0 };
  for (const entry of entries) {
    // Platform surfaces (SPEC §15) are never catalog entries; the guard only narrows the type.
    if (entry.source !== 'platform') sources[entry.source] += 1;
  }
  return { catalogSize: entries.length, sources };
}

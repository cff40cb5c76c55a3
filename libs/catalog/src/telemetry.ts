import type { Telemetry } from '@codemode/contracts';
import type { CatalogEntry } from './catalog-entry';

export type CatalogTelemetry = Pick<Telemetry, 'catalogSize' | 'sources'>;

/** Catalog size and per-source counts for a result's `telemetry`. */
export function catalogTelemetry(entries: readonly CatalogEntry[]): CatalogTelemetry {
  const sources = { openclaw: 0, mcp: 0, client: 0 };
  for (const entry of entries) {
    sources[entry.source] += 1;
  }
  return { catalogSize: entries.length, sources };
}

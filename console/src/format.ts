/** Short, locale-independent renderings of times, durations and sizes. */

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  return `${duration(now - Date.parse(iso))} ago`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

/** `2025-01-15 10:20:30` in UTC: operators compare times across machines. */
export function clock(iso: string | null | undefined): string {
  if (!iso) return '—';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function between(start: string | null | undefined, end: string | null | undefined, now = Date.now()): number | null {
  if (!start) return null;
  return (end ? Date.parse(end) : now) - Date.parse(start);
}

export function json(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(value, null, 2);
}

/** A field of event data that should be text; anything else shows as nothing. */
export function text(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

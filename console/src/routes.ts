export type Route =
  | { name: 'sessions' }
  | { name: 'session'; sessionId: string }
  | { name: 'run'; sessionId: string; runId: string }
  | { name: 'approvals' }
  | { name: 'fleet' }
  | { name: 'unknown' };

/** Reads a hash route: `#/`, `#/sessions/<sid>`, `#/sessions/<sid>/runs/<runId>`, `#/approvals`, `#/fleet`. */
export function route(hash: string): Route {
  let parts: string[];
  try {
    parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return { name: 'unknown' };
  }
  // `.` and `..` survive encodeURIComponent, and fetch would resolve them into another path.
  if (parts.some((part) => /^\.+$/.test(part))) return { name: 'unknown' };
  if (parts.length === 0) return { name: 'sessions' };
  if (parts[0] === 'sessions' && parts.length === 1) return { name: 'sessions' };
  if (parts[0] === 'sessions' && parts.length === 2) return { name: 'session', sessionId: parts[1] };
  if (parts[0] === 'sessions' && parts.length === 4 && parts[2] === 'runs') return { name: 'run', sessionId: parts[1], runId: parts[3] };
  if (parts.length === 1 && parts[0] === 'approvals') return { name: 'approvals' };
  if (parts.length === 1 && parts[0] === 'fleet') return { name: 'fleet' };
  return { name: 'unknown' };
}

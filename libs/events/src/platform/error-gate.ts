/**
 * Lets a log line about a failure through once per `intervalMs` per cause (an error code, the
 * kind of a Redis error reply, the first words of the innermost error's message, or a string
 * naming it): a Redis that is down must not become a log storm (SPEC §13). `admit` answers how
 * many were held back since the last one admitted, or null to hold this one back.
 */
export class ErrorGate {
  private readonly last = new Map<string, { at: number; held: number }>();

  constructor(private readonly intervalMs: number) {}

  admit(cause: unknown, now = Date.now()): { suppressed: number } | null {
    const key = causeOf(cause);
    const seen = this.last.get(key);
    if (seen && now - seen.at < this.intervalMs) {
      seen.held += 1;
      return null;
    }
    // Causes are few (codes, reply kinds); a flood of distinct messages must not grow the map.
    if (!seen && this.last.size >= 64) this.last.clear();
    this.last.set(key, { at: now, held: 0 });
    return { suppressed: seen?.held ?? 0 };
  }
}

function causeOf(cause: unknown): string {
  if (typeof cause === 'string') return cause;
  let error = cause;
  while (error instanceof Error && error.cause instanceof Error) error = error.cause;
  if (!(error instanceof Error)) return String(error);
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // A Redis error reply names its kind first (`MOVED 5272 10.0.0.2:6379`, `CLUSTERDOWN …`);
  // anything else, by its first words with numbers left out (slots, ports, counts).
  const reply = REPLY_KIND.exec(error.message)?.[0];
  return (
    reply ??
    error.message
      .replace(/\d+/g, '#')
      .split(/[\s:.]+/, 3)
      .join(' ')
  );
}

const REPLY_KIND = /^[A-Z][A-Z_]{2,}(?=\s|$)/;

/** The process's gate for log lines about Redis failures: one a second per cause at most. */
export const redisFailureLog = new ErrorGate(1_000);

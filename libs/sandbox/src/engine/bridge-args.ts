/** Readers of bridge request arguments and ids, shared by the run and its replay. */

/** The delay of a `sleep` request (`[ms]`), as the host reads it. */
export function sleepDelay(argsJson: string): number {
  try {
    const args = JSON.parse(argsJson) as unknown;
    return Array.isArray(args) && typeof args[0] === 'number' && Number.isFinite(args[0]) ? Math.max(0, args[0]) : 0;
  } catch {
    return 0;
  }
}

/** Same ids, in any order. */
export function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id) => b.includes(id));
}

/** The method of a bridge id `bridge:<method>:<n>`. */
export function methodOf(id: string): string {
  return id.slice(id.indexOf(':') + 1, id.lastIndexOf(':'));
}

/** A `callValue` request's args name the recorded tool with the recorded input (compact JSON). */
export function sameCall(argsJson: string, tool: string, inputJson: string): boolean {
  try {
    const args = JSON.parse(argsJson) as { tool?: unknown; input?: unknown } | null;
    return args?.tool === tool && JSON.stringify(args.input ?? {}) === inputJson;
  } catch {
    return false;
  }
}

import vm from 'node:vm';
import { GrepTimeoutError, InvalidGrepPatternError } from '../errors';

/**
 * Runs a grep pattern over lines with a wall-time budget. The regex executes inside a `vm` context
 * with a timeout because a guest-written pattern such as `(a+)+$` backtracks exponentially, and
 * V8 can only interrupt a running regex through script termination: without it one call would
 * freeze the worker's event loop (and with it every lease renewal).
 */
export interface LineMatcher {
  /** 0-based indexes of the lines that match. @throws GrepTimeoutError once the budget is spent. */
  matchingLines(lines: readonly string[]): number[];
}

const MATCH_SCRIPT = new vm.Script(
  `(() => {
    const out = [];
    for (let i = 0; i < lines.length; i += 1) {
      re.lastIndex = 0;
      if (re.test(lines[i])) out.push(i);
    }
    return out;
  })()`,
  { filename: 'grep-matcher.js' },
);

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/gu, '\\$&');
}

/**
 * Compiles the pattern (as a JavaScript regular expression, or as literal text) for matching.
 * @throws InvalidGrepPatternError when the pattern does not compile.
 */
export function createLineMatcher(pattern: string, options: { ignoreCase?: boolean; literal?: boolean; budgetMs: number }): LineMatcher {
  const source = options.literal ? escapeRegExp(pattern) : pattern;
  // No `u` flag: its stricter syntax would reject everyday patterns such as `a\-b` or `x{`.
  const flags = options.ignoreCase ? 'i' : '';
  try {
    new RegExp(source, flags); // compile in the host first for a clear syntax error
  } catch (error) {
    throw new InvalidGrepPatternError(error instanceof Error ? error.message : String(error));
  }
  const context = vm.createContext({ lines: [] as readonly string[], re: undefined as unknown });
  // Build the regex inside the context so its execution is interruptible there.
  context.re = vm.runInContext(`new RegExp(${JSON.stringify(source)}, ${JSON.stringify(flags)})`, context) as unknown;
  let remainingMs = options.budgetMs;
  return {
    matchingLines(lines: readonly string[]): number[] {
      if (remainingMs <= 0) {
        throw new GrepTimeoutError(options.budgetMs);
      }
      context.lines = lines;
      const started = performance.now();
      try {
        const found = MATCH_SCRIPT.runInContext(context, { timeout: Math.max(1, Math.ceil(remainingMs)) }) as number[];
        return Array.from(found);
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
          remainingMs = 0;
          throw new GrepTimeoutError(options.budgetMs);
        }
        throw error;
      } finally {
        remainingMs -= performance.now() - started;
        context.lines = [];
      }
    },
  };
}

import { RE2JS } from 're2js';
import { InvalidGrepPatternError, PatternTooExpensiveError } from '../errors';
import type { MatchBudget } from './match-budget';
import { compileErrorDetail, isSizeLimitError } from './re2-error';
import { RegexWorker, type FoundLine, type SearchRequest } from './regex-worker';

/**
 * grep's pattern, as a line matcher. Patterns are RE2 regular expressions, the syntax of ripgrep's
 * default engine (no lookaround, no backreferences), matched in linear time by re2js on a worker
 * thread under the call's budget (regex-worker.ts).
 */
export interface LineMatcher {
  /**
   * The first `request.maxMatches` matching lines of a file's bytes, split on `\n` (a final
   * newline ends the last line rather than starting an empty one), with their context. The bytes'
   * buffer is handed to the matching thread: unusable afterwards.
   * @throws PatternTooExpensiveError once the call's matching budget is spent.
   */
  search(bytes: Uint8Array<ArrayBuffer>, request: SearchRequest): Promise<FoundLine[]>;
  /** Ends the worker thread; call it when the search is over, also after a failure. */
  close(): Promise<void>;
}

/** Syntax RE2 leaves out on purpose; when a pattern uses it, the error says so. */
const UNSUPPORTED_SYNTAX = /\(\?<?[=!]|\\[1-9]/u;

function compileError(pattern: string, message: string): Error {
  if (isSizeLimitError(message)) {
    return new PatternTooExpensiveError(pattern);
  }
  const detail = compileErrorDetail(message);
  return new InvalidGrepPatternError(
    UNSUPPORTED_SYNTAX.test(pattern) ? `${detail}; lookaround and backreferences are not supported (RE2 syntax)` : detail,
  );
}

/**
 * Compiles the pattern (a regular expression, or literal text) for one grep call.
 * @throws InvalidGrepPatternError when it is not valid RE2 syntax.
 * @throws PatternTooExpensiveError when compiling it alone spends the budget or exceeds RE2's limits.
 */
export async function createLineMatcher(
  pattern: string,
  options: { ignoreCase?: boolean; literal?: boolean },
  budget: MatchBudget,
): Promise<LineMatcher> {
  const worker = await RegexWorker.start(pattern, budget);
  try {
    const source = options.literal ? RE2JS.quote(pattern) : pattern;
    const message = await worker.compile(source, options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
    if (message !== undefined) {
      throw compileError(pattern, message);
    }
    return worker;
  } catch (error) {
    await worker.close();
    throw error;
  }
}

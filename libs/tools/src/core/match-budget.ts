import { PatternTooExpensiveError } from '../errors';
import { PATTERN_MATCH_BUDGET_MS } from './limits';

/**
 * The matching time one find or grep call may spend, shared by its regex and its glob. Matching is
 * linear-time (re2js), but linear in a 16 MiB file is still long: the budget bounds the total, and
 * the first match that finds it spent fails the call with `pattern too expensive: <pattern>`.
 */
export class MatchBudget {
  private usedMs = 0;

  constructor(private readonly limitMs: number = PATTERN_MATCH_BUDGET_MS) {}

  /** Milliseconds left; a caller running a match elsewhere uses it as that match's deadline. */
  get remainingMs(): number {
    return Math.max(0, this.limitMs - this.usedMs);
  }

  /**
   * Records `ms` spent matching `pattern`.
   * @throws PatternTooExpensiveError once the budget is spent.
   */
  charge(pattern: string, ms: number): void {
    this.usedMs += ms;
    if (this.usedMs > this.limitMs) {
      throw new PatternTooExpensiveError(pattern);
    }
  }

  /**
   * Runs one in-thread match of `pattern` and charges its time. The caller keeps each match short
   * (bounded subject and pattern sizes); the budget bounds how many of them one call may run.
   * @throws PatternTooExpensiveError when the budget is already spent or this match spends it.
   */
  run<T>(pattern: string, match: () => T): T {
    if (this.remainingMs <= 0) {
      throw new PatternTooExpensiveError(pattern);
    }
    const started = performance.now();
    const result = match();
    this.charge(pattern, performance.now() - started);
    return result;
  }
}

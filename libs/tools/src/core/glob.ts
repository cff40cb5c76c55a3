import { RE2JS, RE2JSException } from 're2js';
import { InvalidGlobPatternError, PatternTooExpensiveError } from '../errors';
import { GLOB_MAX_CHARS } from './limits';
import type { MatchBudget } from './match-budget';
import { compileErrorDetail } from './re2-error';

/**
 * Glob patterns for find and grep, as fd and ripgrep read them: `*` and `?` stay inside one path
 * segment, `**` spans segments, `[abc]`/`[!a-z]` are classes and `{a,b}` alternatives. A pattern
 * without `/` matches a file's name at any depth (`*.ts`); one with `/` matches the path relative
 * to the search directory (`src/**\/*.spec.ts`). Written here because Node 20 has no stable glob.
 *
 * A glob becomes an RE2 regular expression matched by re2js, in time linear in the path: a
 * backtracking engine would spend seconds on `a*a*a*a*a*a*a*a*a*a*a*a*a*b` against a long name.
 * Each match is charged to the call's budget.
 */

export interface GlobMatcher {
  /**
   * Tests a `/`-separated path relative to the search directory.
   * @throws PatternTooExpensiveError once the call's matching budget is spent.
   */
  matches(relativePath: string): boolean;
}

function escapeRegex(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/u.test(char) ? `\\${char}` : char;
}

/** Index of the `]` closing a class opened at `start`, or -1. */
function classEnd(pattern: string, start: number): number {
  let index = start + 1;
  if (pattern[index] === '!' || pattern[index] === '^') {
    index += 1;
  }
  if (pattern[index] === ']') {
    index += 1;
  }
  for (; index < pattern.length; index += 1) {
    if (pattern[index] === ']') {
      return index;
    }
  }
  return -1;
}

function translate(pattern: string): string {
  let out = '';
  let braceDepth = 0;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index];
    if (char === '*') {
      if (pattern[index + 1] === '*') {
        const atSegmentStart = index === 0 || pattern[index - 1] === '/';
        index += 1;
        if (atSegmentStart && pattern[index + 1] === '/') {
          index += 1;
          out += '(?:[^/]*/)*'; // `**/` matches zero or more whole directories
        } else {
          out += '.*';
        }
      } else {
        out += '[^/]*';
      }
    } else if (char === '?') {
      out += '[^/]';
    } else if (char === '[') {
      const end = classEnd(pattern, index);
      if (end === -1) {
        out += '\\[';
        continue;
      }
      let body = pattern.slice(index + 1, end);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) {
        body = body.slice(1);
      }
      // Escape what RE2 reads specially inside a class; `[` too, so `[:alpha:]` stays literal text.
      out += `[${negated ? '^/' : ''}${body.replace(/[\\[\]]/gu, '\\$&')}]`;
      index = end;
    } else if (char === '{') {
      braceDepth += 1;
      out += '(?:';
    } else if (char === '}' && braceDepth > 0) {
      braceDepth -= 1;
      out += ')';
    } else if (char === ',' && braceDepth > 0) {
      out += '|';
    } else if (char === '\\' && index + 1 < pattern.length) {
      index += 1;
      out += escapeRegex(pattern[index]);
    } else {
      out += escapeRegex(char);
    }
  }
  // An unclosed `{` is literal text in fd; closing the groups keeps the regex valid.
  return out + ')'.repeat(braceDepth);
}

function compileRegex(glob: string, source: string): RE2JS {
  try {
    return RE2JS.compile(source);
  } catch (error) {
    // Within GLOB_MAX_CHARS a translated glob stays far below RE2's size and nesting limits, so a
    // failure here is a malformed glob.
    throw new InvalidGlobPatternError(glob, compileErrorDetail(error instanceof RE2JSException ? error.message : String(error)));
  }
}

/**
 * Compiles a glob whose matches are charged to `budget`. A leading `./` or `/` anchors it to the
 * search directory.
 * @throws PatternTooExpensiveError for a glob over GLOB_MAX_CHARS characters.
 * @throws InvalidGlobPatternError when it does not compile (e.g. `[z-a]`).
 */
export function compileGlob(pattern: string, budget: MatchBudget): GlobMatcher {
  if (pattern.length > GLOB_MAX_CHARS) {
    throw new PatternTooExpensiveError(pattern);
  }
  const trimmed = pattern.replace(/^\.\//u, '').replace(/^\/+/u, '');
  const byPath = trimmed.includes('/');
  const regex = compileRegex(pattern, `^${translate(trimmed)}$`);
  return {
    matches(relativePath: string): boolean {
      const subject = byPath ? relativePath : relativePath.slice(relativePath.lastIndexOf('/') + 1);
      return budget.run(pattern, () => regex.test(subject));
    },
  };
}

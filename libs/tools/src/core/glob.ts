/**
 * Glob patterns for find and grep, as fd and ripgrep read them: `*` and `?` stay inside one path
 * segment, `**` spans segments, `[abc]`/`[!a-z]` are classes and `{a,b}` alternatives. A pattern
 * without `/` matches a file's name at any depth (`*.ts`); one with `/` matches the path relative
 * to the search directory (`src/**\/*.spec.ts`). Written here because Node 20 has no stable glob.
 */

export interface GlobMatcher {
  /** Tests a `/`-separated path relative to the search directory. */
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
      out += `[${negated ? '^/' : ''}${body.replace(/\\/gu, '\\\\').replace(/\]/gu, '\\]')}]`;
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

/** Compiles a glob. A leading `./` or `/` anchors it to the search directory. */
export function compileGlob(pattern: string): GlobMatcher {
  const trimmed = pattern.replace(/^\.\//u, '').replace(/^\/+/u, '');
  const byPath = trimmed.includes('/');
  const regex = new RegExp(`^${translate(trimmed)}$`, 'u');
  return {
    matches(relativePath: string): boolean {
      const subject = byPath ? relativePath : relativePath.slice(relativePath.lastIndexOf('/') + 1);
      return regex.test(subject);
    },
  };
}

/** Reading re2js compile errors, shared by grep regexes and globs. */

/** RE2 refuses a pattern over its program size or nesting limits with these words. */
const SIZE_LIMIT = /expression too large|nests too deeply/u;

/** True when RE2 refused the pattern for its size rather than its syntax: a cost, not a typo. */
export function isSizeLimitError(message: string): boolean {
  return SIZE_LIMIT.test(message);
}

/** The error without re2js's fixed prefix: "missing closing ): `(a`". */
export function compileErrorDetail(message: string): string {
  return message.replace(/^error parsing regexp: /u, '');
}

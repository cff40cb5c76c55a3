/** SPEC §18 "Credentials outside the cell": what a tenant tool's `headers` may hold. */

/** Most headers one tenant tool may carry. */
export const MAX_TOOL_HEADERS = 16;
/** Largest value of one header, in UTF-8 bytes. */
export const MAX_TOOL_HEADER_VALUE_BYTES = 4096;
/** RFC 9110 `token`: the characters a header name is made of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
/** What a value may not hold: a line break or NUL would end or split the header. */
const VALUE_BREAK = /[\r\n\0]/;
/** Headers code mode sets on every call (the body's, the call key's), compared lower-cased. */
const RESERVED = ['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'idempotency-key'];
/** The prefix of the signature's and every other header code mode owns. */
const RESERVED_PREFIX = 'x-codemode-';

/** The 400 for a header name code mode sets itself (SPEC gives the rule; this sentence is docs/contract.md's). */
export function reservedToolHeaderMessage(name: string): string {
  return (
    `${name} is set by code mode on every call and cannot be a tool header; remove it ` +
    '(Host, Content-Length, Content-Type, Transfer-Encoding, Connection, Idempotency-Key and X-Codemode-* are refused).'
  );
}

/** Whether code mode owns this header name (case-insensitive). */
export function isReservedToolHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED.includes(lower) || lower.startsWith(RESERVED_PREFIX);
}

/**
 * The first thing wrong with a tenant tool's `headers` (a record already), as `[name or '', why]`,
 * or null when they may be stored. Names are compared case-insensitively, as HTTP does.
 */
export function toolHeadersProblem(headers: Record<string, string>): [string, string] | null {
  const names = Object.keys(headers);
  if (names.length > MAX_TOOL_HEADERS) return ['', `at most ${MAX_TOOL_HEADERS} headers; remove ${names.length - MAX_TOOL_HEADERS}.`];
  const seen = new Set<string>();
  for (const name of names) {
    if (!TOKEN.test(name)) {
      return [name, "a header name is 1-256 of the token characters A-Z a-z 0-9 and !#$%&'*+.^_`|~- ; rename it."];
    }
    if (isReservedToolHeader(name)) return [name, reservedToolHeaderMessage(name)];
    if (seen.has(name.toLowerCase())) return [name, `${name} is given twice (header names are case-insensitive); keep one.`];
    seen.add(name.toLowerCase());
    const value = headers[name];
    if (new TextEncoder().encode(value).length > MAX_TOOL_HEADER_VALUE_BYTES) {
      return [name, `the value of ${name} is over ${MAX_TOOL_HEADER_VALUE_BYTES} bytes; shorten it.`];
    }
    if (VALUE_BREAK.test(value)) return [name, `the value of ${name} holds a line break or NUL, which a header cannot carry; remove it.`];
  }
  return null;
}

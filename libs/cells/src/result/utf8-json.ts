/**
 * Byte accounting for results: every budget in SPEC §3 Output is UTF-8 bytes of compact JSON.
 */

/** UTF-8 bytes of `text` as written (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** UTF-8 bytes of the compact JSON of `value` (`undefined` counts as `null`). */
export function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? 'null');
}

const SUFFIX_CHARS = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The longest prefix of `text` for which `fits(prefix)` holds, cut on a code-point boundary so a
 * surrogate pair is never split; lone surrogates in the prefix become U+FFFD so the prefix is
 * always valid UTF-8. `fits` must be monotonic (a shorter prefix never costs more).
 */
export function longestFittingPrefix(text: string, fits: (prefix: string) => boolean): string {
  let low = 0;
  let high = text.length;
  // Binary search over UTF-16 cut points; each probe is made code-point safe before measuring.
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(safePrefix(text, middle))) low = middle;
    else high = middle - 1;
  }
  return safePrefix(text, low);
}

/** First `units` UTF-16 units, backing off one unit rather than splitting a surrogate pair. */
export function safePrefix(text: string, units: number): string {
  let end = Math.min(units, text.length);
  const last = end > 0 ? text.charCodeAt(end - 1) : 0;
  if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end).replace(SUFFIX_CHARS, '\ufffd');
}

/** Helpers that cut strings to a byte budget measured as they will appear inside JSON. */

/** Bytes `text` takes inside a JSON string literal (without the quotes). */
export function escapedBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), 'utf8') - 2;
}

/**
 * The longest prefix of `text`, cut at a code point boundary, whose JSON-escaped form takes at
 * most `budget` bytes; `marker` (e.g. '…') is appended when the text had to be cut and is counted
 * in the budget.
 */
export function fitEscaped(text: string, budget: number, marker = ''): { text: string; cut: boolean } {
  if (escapedBytes(text) <= budget) return { text, cut: false };
  const room = budget - escapedBytes(marker);
  let used = 0;
  let end = 0;
  for (const ch of text) {
    // JSON.stringify escapes quotes, backslashes, controls and lone surrogates: measure it so.
    const cost = escapedBytes(ch);
    if (used + cost > room) break;
    used += cost;
    end += ch.length;
  }
  return { text: room < 0 ? '' : text.slice(0, end) + marker, cut: true };
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, cut at a code point boundary. */
export function utf8Prefix(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let used = 0;
  let end = 0;
  for (const ch of text) {
    const cost = Buffer.byteLength(ch, 'utf8');
    if (used + cost > maxBytes) break;
    used += cost;
    end += ch.length;
  }
  return text.slice(0, end);
}

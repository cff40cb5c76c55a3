/** Small text helpers shared by the action answers. */

/** `500ms`, `45s`, `2m5s`, `1h30m`, `2d3h`: the two largest non-zero units. */
export function formatDuration(ms: number): string {
  const rounded = Math.max(0, Math.round(ms));
  if (rounded < 1000) return `${rounded}ms`;
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  let rest = rounded;
  const parts: string[] = [];
  for (const [label, size] of units) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 || parts.length > 0) parts.push(count > 0 ? `${count}${label}` : '');
    if (parts.length === 2) break;
  }
  return parts.join('');
}

export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor((max - 3) / 2);
  return `${text.slice(0, half)}...${text.slice(text.length - half)}`;
}

function stripQuotes(value: string): string {
  const t = value.trim();
  const quoted = (t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"));
  return quoted && t.length >= 2 ? t.slice(1, -1) : t;
}

/** A short label for a command: its verb and first non-flag argument (`npm test`, `sleep 30`). */
export function sessionName(command: string): string | undefined {
  const tokens = (command.match(/(?:[^\s"']+|"(?:\\.|[^"])*"|'(?:\\.|[^'])*')+/g) ?? []).map(stripQuotes).filter(Boolean);
  if (tokens.length === 0) return undefined;
  const target = tokens.slice(1).find((t) => !t.startsWith('-')) ?? tokens[1];
  return target ? `${tokens[0]} ${truncateMiddle(target, 48)}` : tokens[0];
}

export function padRight(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

export interface LogSlice {
  slice: string;
  totalLines: number;
  totalChars: number;
}

/**
 * Lines `[offset, offset+limit)` of `text`. `limit` alone counts from the end (the last N lines);
 * `offset` alone runs to the end. A trailing newline does not make an extra empty line.
 */
export function sliceLines(text: string, offset?: number, limit?: number): LogSlice {
  if (!text) return { slice: '', totalLines: 0, totalChars: 0 };
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const totalLines = lines.length;
  const count = limit === undefined ? undefined : Math.max(0, Math.floor(limit));
  let start = offset === undefined ? 0 : Math.max(0, Math.floor(offset));
  if (offset === undefined && count !== undefined) start = Math.max(0, totalLines - count);
  const end = count === undefined ? undefined : start + count;
  return { slice: lines.slice(start, end).join('\n'), totalLines, totalChars: text.length };
}

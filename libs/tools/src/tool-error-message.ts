/**
 * The message of a failed tool call (SPEC §4: "a tool error with no message carries the tool's
 * text as message"). Works for MCP `isError` results (their text content, joined), shell answers
 * (`{text, details}`), webhook error bodies and thrown errors.
 */

/** Longest message built from a tool's own text; the rest is cut with a marker. */
export const MAX_TOOL_ERROR_MESSAGE_CHARS = 16_384;
/** Used when a failed result carries no text at all. */
export const DEFAULT_TOOL_ERROR_MESSAGE = 'tool call failed';

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function bounded(text: string): string {
  return text.length <= MAX_TOOL_ERROR_MESSAGE_CHARS ? text : `${text.slice(0, MAX_TOOL_ERROR_MESSAGE_CHARS)} [truncated]`;
}

/** Text items of an MCP-style `content` array, joined by newlines; '' when there are none. */
export function contentText(content: unknown): string {
  if (!Array.isArray(content)) {
    return '';
  }
  return content
    .filter((item): item is { type: 'text'; text: string } => {
      const record = item as { type?: unknown; text?: unknown } | null;
      return record !== null && typeof record === 'object' && record.type === 'text' && typeof record.text === 'string';
    })
    .map((item) => item.text)
    .join('\n');
}

/** True for an MCP tool result the server marked as failed. */
export function isMcpErrorResult(result: unknown): boolean {
  return result !== null && typeof result === 'object' && (result as { isError?: unknown }).isError === true;
}

/**
 * Message for a failed tool call, in order of preference: a non-empty `message` (of an Error or a
 * plain object), a string `error` (or `error.message`), the text `content` joined, a `text`
 * field, the JSON of `structuredContent`, a bare string; else `tool call failed`.
 */
export function toolErrorMessage(result: unknown, fallback: string = DEFAULT_TOOL_ERROR_MESSAGE): string {
  if (nonEmpty(result)) {
    return bounded(result);
  }
  if (result === null || typeof result !== 'object') {
    return fallback;
  }
  const record = result as Record<string, unknown>;
  const error = record.error;
  const candidates: unknown[] = [
    record.message,
    error,
    error !== null && typeof error === 'object' ? (error as Record<string, unknown>).message : undefined,
    contentText(record.content),
    record.text,
  ];
  const found = candidates.find(nonEmpty);
  if (found !== undefined) {
    return bounded(found);
  }
  if (record.structuredContent !== undefined) {
    try {
      return bounded(JSON.stringify(record.structuredContent));
    } catch {
      return fallback;
    }
  }
  return fallback;
}

import type { CodeModeOutput } from '@codemode/contracts';
import { OUTPUT_TRUNCATED_TEXT } from './truncation-text';
import { jsonBytes } from './utf8-json';

export interface BoundedOutput {
  /** Entries to return; empty means the `output` field is omitted. */
  entries: CodeModeOutput[];
  /** UTF-8 bytes of `JSON.stringify(entries)`, 0 when empty. */
  bytes: number;
  truncated: boolean;
}

const MARKER: CodeModeOutput = { type: 'text', text: OUTPUT_TRUNCATED_TEXT };
const MARKER_BYTES = jsonBytes(MARKER);

/**
 * Cuts output at entry boundaries to fit `limitBytes` of UTF-8 JSON (the whole array, brackets and
 * commas included). Keeps the earliest entries and, when anything was cut, ends with exactly one
 * `[output truncated]` entry that fits inside the limit. If not even the marker fits, nothing is
 * returned.
 */
export function boundOutput(entries: readonly CodeModeOutput[], limitBytes: number): BoundedOutput {
  if (entries.length === 0) return { entries: [], bytes: 0, truncated: false };
  const sizes = entries.map((entry) => jsonBytes(entry));
  const fullBytes = 2 + sizes.reduce((sum, size) => sum + size, 0) + (entries.length - 1);
  if (fullBytes <= limitBytes) return { entries: [...entries], bytes: fullBytes, truncated: false };

  // Array of k kept entries plus the marker: brackets + entries + marker + k commas.
  let keptBytes = 0;
  let kept = 0;
  while (kept < entries.length && 2 + keptBytes + sizes[kept] + 1 + MARKER_BYTES <= limitBytes) {
    keptBytes += sizes[kept] + 1;
    kept += 1;
  }
  const bytes = 2 + keptBytes + MARKER_BYTES;
  if (bytes > limitBytes) return { entries: [], bytes: 0, truncated: true };
  return { entries: [...entries.slice(0, kept), MARKER], bytes, truncated: true };
}

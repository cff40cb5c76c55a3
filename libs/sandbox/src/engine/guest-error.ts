import type { CodeModeErrorCode, FailurePhase } from '@codemode/contracts';
import { MODULE_ACCESS_MESSAGE, STACK_OVERFLOW_TEXT } from '@codemode/cells';
import { CELL_FILE, CELL_PREFIX, PRELUDE_FILE } from '../guest/prelude';

/** A thrown guest value as the prelude's `describe` reported it (one JSON string). */
export interface GuestErrorRecord {
  name?: string;
  message?: string;
  stack?: string;
  /** Set instead of name/message when the thrown value was not an Error. */
  text?: string;
  /** The host rejected it: a `store`/`load` request's error (SPEC §4: phase `bridge`). */
  bridge?: boolean;
}

export interface Failure {
  code: CodeModeErrorCode;
  phase: FailurePhase;
  error: string;
}

const MAX_FRAMES = 12;
const MODULE_GLOBALS = /^'?(?:process|module|require)'? is not defined$/;
const LINE_ONE_FRAME = new RegExp(`${CELL_FILE.replace('.', '\\.')}:1:(\\d+)`, 'g');

export function parseGuestErrorRecord(json: string): GuestErrorRecord {
  try {
    const parsed = JSON.parse(json) as Record<string, unknown>;
    const pick = (key: string) => (typeof parsed[key] === 'string' ? parsed[key] : undefined);
    const record: GuestErrorRecord = { name: pick('name'), message: pick('message'), stack: pick('stack'), text: pick('text') };
    if (parsed.bridge === true) record.bridge = true;
    return record;
  } catch {
    return { text: '[unreadable error]' };
  }
}

/** `Name: message` plus the guest frames (prelude frames dropped, line-1 columns made the user's). */
export function formatGuestError(record: GuestErrorRecord): string {
  if (record.name === undefined) return record.text ?? '[unreadable error]';
  const header = isStackOverflow(record) ? STACK_OVERFLOW_TEXT : record.message ? `${record.name}: ${record.message}` : record.name;
  const frames = (record.stack ?? '')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.includes(PRELUDE_FILE))
    .map((line) => line.replace(LINE_ONE_FRAME, (_m, col: string) => `${CELL_FILE}:1:${Math.max(1, Number(col) - CELL_PREFIX.length)}`));
  const shown = frames.slice(0, MAX_FRAMES);
  if (frames.length > shown.length) shown.push(`    ... ${frames.length - shown.length} more frames`);
  return shown.length > 0 ? `${header}\n${shown.join('\n')}` : header;
}

/** QuickJS's own overflow of its stack limit (unbounded recursion; parser overflows are SyntaxErrors). */
function isStackOverflow(record: GuestErrorRecord): boolean {
  return record.name === 'InternalError' && record.message === 'stack overflow';
}

/**
 * SPEC §3: module globals are `invalid_input`; everything else the guest threw is
 * `internal_error`, in phase `bridge` when the host rejected it (an uncaught store error, §4).
 */
export function classifyGuestError(record: GuestErrorRecord): Failure {
  if (record.name === 'ReferenceError' && MODULE_GLOBALS.test(record.message ?? '')) {
    return { code: 'invalid_input', phase: 'guest', error: MODULE_ACCESS_MESSAGE };
  }
  return { code: 'internal_error', phase: record.bridge ? 'bridge' : 'guest', error: formatGuestError(record) };
}

/** A syntax error found when QuickJS compiled the cell (the source checker normally catches it first). */
export function classifyCompileError(record: GuestErrorRecord): Failure {
  if (record.name === 'SyntaxError') return { code: 'invalid_input', phase: 'input', error: formatGuestError(record) };
  return classifyGuestError(record);
}

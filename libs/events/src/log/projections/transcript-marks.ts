import type { CodeModeResult, TranscriptEntry } from '@codemode/contracts';
import type { LoggedEvent } from '../event-encoding';
import { StoreCommandError } from '../../platform/errors';

/**
 * One element of a session's transcript list (lua/includes/transcript.lua): a mark naming the
 * event an entry is built from, `<kind><call><eventId>`; or, in lists written before the
 * transcript was derived from the log, the entry itself as JSON (it starts with `{`).
 */
export type TranscriptElement = { mark: TranscriptMark } | { entry: TranscriptEntry };

export interface TranscriptMark {
  kind: TranscriptEntry['kind'];
  call: TranscriptEntry['call'];
  eventId: string;
}

const KINDS: Record<string, TranscriptMark['kind']> = { i: 'input', r: 'result' };
const CALLS: Record<string, TranscriptMark['call']> = { e: 'exec', w: 'wait' };

export function readTranscriptElement(element: string): TranscriptElement {
  try {
    if (element.startsWith('{')) return { entry: JSON.parse(element) as TranscriptEntry };
    const kind = KINDS[element[0]];
    const call = CALLS[element[1]];
    if (!kind || !call || element.length < 5) throw new Error(`not a transcript mark: ${element.slice(0, 40)}`);
    return { mark: { kind, call, eventId: element.slice(2) } };
  } catch (err) {
    throw new StoreCommandError(err);
  }
}

/** An exec's transcript input: the cell's own fields of its `run.requested`, in this order. */
export function execInput(data: Record<string, unknown>): Record<string, unknown> {
  return { title: data.title, code: data.code, restartSafe: data.restartSafe, awaitResults: data.awaitResults };
}

/**
 * The entry a mark names, from the event it names: what the list held as the entry's text
 * before (an exec's input from `run.requested`, a wait's input and every result verbatim from
 * the event's data); `runId` null for `exec.rejected`, which belongs to no run.
 */
export function entryOfMark(mark: TranscriptMark, event: LoggedEvent): TranscriptEntry {
  const { call } = mark;
  const runId = event.runId ?? null;
  const { at, data } = event;
  if (mark.kind === 'result') return { kind: 'result', call, runId, at, result: data.result as CodeModeResult };
  const input = event.type === 'run.requested' ? execInput(data) : data.input;
  return { kind: 'input', call, runId, at, input };
}

import { EVENT_TYPES, type EventType } from '@codemode/contracts';
import { StoreCommandError } from '../platform/errors';

/**
 * What a stream entry kept compact (`CODEMODE_COMPACT_RUNS`) holds in place of two of its values,
 * and how a reader gets them back (issue 40: bytes kept per finished run). Written by
 * lua/includes/entry-codes.lua, which mirrors this table (entry-codes.spec.ts pins the two).
 *
 * A type is kept as one character. The codes are stored for as long as retention keeps an entry,
 * so one is never changed or given to another type; a new type gets a new code, or none (its name
 * is then kept). A stored type holding a '.' is a name: entries written in full, or by a release
 * before the codes, read as they were.
 */
export const EVENT_TYPE_CODES: Readonly<Record<EventType, string>> = {
  'session.configured': 'a',
  'exec.rejected': 'b',
  'run.requested': 'q',
  'run.started': 's',
  'run.output': 'o',
  'run.parked': 'p',
  'run.resumed': 'r',
  'run.waited': 'w',
  'run.completed': 'c',
  'run.failed': 'f',
  'run.expired': 'e',
  'run.lost': 'l',
  'run.recovered': 'v',
  'run.released': 'x',
  'tool.called': 'T',
  'tool.settled': 'S',
  'tool.blocked': 'B',
  'approval.requested': 'A',
  'approval.decided': 'D',
  'store.committed': 'C',
  'tools.registered': 'R',
  'skills.registered': 'K',
  'shell.started': 'h',
  'shell.output': 'u',
  'shell.exited': 'y',
  'shell.removed': 'z',
  'shell.notified': 'n',
};

const TYPE_OF_CODE: ReadonlyMap<string, EventType> = new Map(EVENT_TYPES.map((type) => [EVENT_TYPE_CODES[type], type]));

/**
 * The type an entry's stored `type` value names (a code, or the name itself). A code this release
 * does not know (a later release's type, during a rolling upgrade) reads as it is stored, as an
 * unknown name would: the reads of the rest of the log go on.
 */
export function eventTypeOf(stored: string): EventType {
  return (stored.includes('.') ? stored : (TYPE_OF_CODE.get(stored) ?? stored)) as EventType;
}

/**
 * The data text of an entry kept compact whose data is one of the shapes every run repeats
 * (lua/includes/entry-codes.lua keeps their variable parts only), exactly as it was written;
 * undefined for data kept as it is (or packed: `unpackEventData`). `runId` and `epoch` are the
 * entry's own, which those shapes repeat.
 */
export function compactDataText(type: EventType, stored: string, runId: string, epoch: string): string | undefined {
  if (stored.startsWith('~w') && type === 'run.started') return `{"workerId":${stored.slice(2)},"epoch":${epoch}}`;
  if (stored.startsWith('~t') && type === 'tool.called') {
    const [call, source, inputBytes, key, tool] = fields(stored, 4);
    return `{"callId":"bridge:${call}","tool":${tool},"source":"${source}","inputBytes":${inputBytes},"callKey":"${runId}:${key}"}`;
  }
  if (stored.startsWith('~s') && type === 'tool.settled') {
    const [call, durationMs, resultBytes, tool] = fields(stored, 3);
    return `{"callId":"bridge:${call}","tool":${tool},"ok":true,"durationMs":${durationMs},"resultBytes":${resultBytes}}`;
  }
  return undefined;
}

/** The `|`-separated fields after a compact data's two-character prefix: `before` of them, then the rest (a JSON string, which may hold `|`). */
function fields(stored: string, before: number): string[] {
  const parts: string[] = [];
  let from = 2;
  for (let i = 0; i < before; i += 1) {
    const bar = stored.indexOf('|', from);
    if (bar < 0) throw new StoreCommandError(new Error(`unreadable compact event data ${JSON.stringify(stored.slice(0, 64))} in the log`));
    parts.push(stored.slice(from, bar));
    from = bar + 1;
  }
  parts.push(stored.slice(from));
  return parts;
}

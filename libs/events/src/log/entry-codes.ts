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

/** The type an entry's stored `type` value names (a code, or the name itself). */
export function eventTypeOf(stored: string): EventType {
  if (stored.includes('.')) return stored as EventType;
  const type = TYPE_OF_CODE.get(stored);
  if (type === undefined) throw new StoreCommandError(new Error(`unknown event type code ${JSON.stringify(stored)} in the log`));
  return type;
}

/**
 * `run.started`'s data is `{"workerId":<JSON string>,"epoch":<the entry's epoch>}` (start-run.lua,
 * finish-run.lua's claim); kept compact, the entry holds this prefix and the JSON string only.
 */
export const STARTED_DATA_PREFIX = '~w';

/** A `run.started` entry's data text as it was written, from what the entry keeps. */
export function startedEventData(stored: string, epoch: string): string {
  return `{"workerId":${stored.slice(STARTED_DATA_PREFIX.length)},"epoch":${epoch}}`;
}

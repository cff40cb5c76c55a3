import { endedFields } from '../log/projections/views';

/*
 * A finished run's record as lua/includes/run-record.lua writes it (that header says what it
 * holds): the scripts read records whole (read-run.lua, read-events-page.lua); a reader here needs
 * only the run hash's fields it keeps, for listings and for a run's status.
 */
const SEP = '\x1f';
const FIELD_CODES: Readonly<Record<string, string>> = { s: 'status', e: 'epoch', t: 'title', n: 'ended' };
const CODE_STATUSES: Readonly<Record<string, string>> = { c: 'completed', f: 'failed', x: 'expired', l: 'lost' };
const RUN_ID_HEX = /^cm_([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/;

/** The field of a run's record in the session's hash of past runs (run-record.lua's past_field): a `cm_<uuid>` id as its 16 bytes. */
export function pastField(runId: string): string | Buffer {
  const parts = RUN_ID_HEX.exec(runId);
  return parts ? Buffer.from(parts.slice(1).join(''), 'hex') : runId;
}

/** The fields of the hash a run had when it was folded, as HGETALL would answer them. */
export function recordFields(record: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const tokens = record.split(SEP);
  for (let i = 0; i < tokens.length && tokens[i] !== ''; i++) {
    // The first token starts with the record's kind.
    const token = i === 0 ? tokens[i].slice(1) : tokens[i];
    if (token[0] === '=') {
      const eq = token.indexOf('=', 1);
      fields[token.slice(1, eq)] = token.slice(eq + 1);
    } else if (token[0] === 'S') {
      fields.status = CODE_STATUSES[token.slice(1)];
    } else {
      fields[FIELD_CODES[token[0]]] = token.slice(1);
    }
  }
  return fields;
}

/**
 * The fields a folded run's record keeps of its hash while it is kept for readers of runs: until
 * RETENTION_MS after its end, when its hash's TTL would have ended it (record_of in run-record.lua);
 * null for no record, or one retention passed.
 */
export function keptRecordFields(record: string | null, retentionMs: number, nowMs: number): Record<string, string> | null {
  if (record === null) return null;
  const fields = recordFields(record);
  const ended = fields.endedAt ?? (fields.ended === undefined ? undefined : endedFields(fields.ended).endedAt);
  return Number(ended ?? 0) + retentionMs > nowMs ? fields : null;
}

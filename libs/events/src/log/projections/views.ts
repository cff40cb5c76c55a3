import type { CodeModeResult, Limits, RunSummary, RunView, SessionRef, ShellConfig } from '@codemode/contracts';
import { toRunStatus } from '../../platform/lua-errors';
import { unpackEventData } from '../event-packing';

/** The session's stored configuration: overrides only; libs/config resolves defaults. */
export interface SessionSettings {
  agentId: string | null;
  codeMode: Partial<Limits>;
  shell: Partial<ShellConfig>;
  /** SPEC §15: the session's cells have `agents` (false when never set). */
  agents: boolean;
  /** SPEC §16: the session's own repairAttempts; absent: the default. */
  repairAttempts?: number;
  /** SPEC §7: where background shell sessions' exits are POSTed; null when none. */
  notifyUrl: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The session projection plus its counts. */
export interface SessionRecord extends SessionSettings {
  counts: { runs: number; events: number; transcriptEntries: number };
}

/** Reads the session hash (+ XLEN, LLEN) into a SessionRecord; null when the hash is missing. */
export function sessionFromHash(hash: Record<string, string>, events: number, transcriptEntries: number): SessionRecord | null {
  const settings = settingsFromHash(hash);
  return settings && { ...settings, counts: { runs: Number(hash.runs ?? 0), events, transcriptEntries } };
}

/** Reads the session hash into its SessionSettings; null when the hash is missing. */
export function settingsFromHash(hash: Record<string, string>): SessionSettings | null {
  if (!hash.createdAt) return null;
  return {
    agentId: hash.agentId ?? null,
    codeMode: parseJson<Partial<Limits>>(hash.codeMode) ?? {},
    shell: parseJson<Partial<ShellConfig>>(hash.shell) ?? {},
    agents: hash.agents === '1',
    ...(hash.repairAttempts === undefined ? {} : { repairAttempts: Number(hash.repairAttempts) }),
    notifyUrl: hash.notifyUrl ?? null,
    createdAt: hash.createdAt,
    updatedAt: hash.updatedAt ?? hash.createdAt,
  };
}

/**
 * Reads a run hash into the RunView contract; null when the hash is missing. `resultData`: the data
 * of the event the hash names as `resultEvent` (lua/read-run.lua), where the run's last result is;
 * a hash of an earlier release keeps a copy, `lastResult`, instead.
 */
export function runFromHash(ref: SessionRef, runId: string, hash: Record<string, string>, resultData = ''): RunView | null {
  const summary = runSummaryFromHash(ref, runId, hash);
  if (!summary) return null;
  const { replaySafe: _replaySafe, ...view } = summary;
  return { ...view, lastResult: hash.lastResult === undefined ? resultIn(resultData) : parseJson<CodeModeResult>(hash.lastResult) };
}

/**
 * A run hash as the run listing shows it: no result, its replaySafe (null before it has one). A
 * run's hash may be kept compact (projections.lua): without its id, which is the key's, without
 * `restartSafe` when false, `createdAt`, `startedAt` and `endedAt` in milliseconds, and once
 * finished without `updatedAt`, which is then its `endedAt` (its terminal event is its last), and
 * with what only a view reads packed into one field, `ended` (endedFields).
 */
export function runSummaryFromHash(ref: SessionRef, runId: string, stored: Record<string, string>): RunSummary | null {
  // A field of its own goes before `ended` (as in the scripts that read them: reserve-resume.lua).
  const hash = stored.ended === undefined ? stored : { ...endedFields(stored.ended), ...stored };
  const status = toRunStatus(hash.status);
  if (!status) return null;
  const createdAt = runTime(hash.createdAt);
  const endedAt = runTime(hash.endedAt);
  return {
    runId,
    sessionId: ref.sessionId,
    title: parseJson<string>(hash.title) ?? '',
    status,
    restartSafe: hash.restartSafe === 'true',
    // A released run has owner '': nobody holds it.
    owner: hash.owner || null,
    epoch: Number(hash.epoch ?? 0),
    createdAt: createdAt ?? '',
    startedAt: runTime(hash.startedAt),
    endedAt,
    parkedAt: hash.parkedAt ?? null,
    expiresAt: hash.expiresAt ?? null,
    updatedAt: hash.updatedAt ?? endedAt ?? createdAt ?? '',
    replaySafe:
      hash.replaySafe === undefined ? (parseJson<CodeModeResult>(hash.lastResult)?.replaySafe ?? null) : hash.replaySafe === 'true',
  };
}

/**
 * The fields a finished run's hash kept compact packs into `ended` (lua/includes/ended-run.lua,
 * which writes it: `createdAt,startedAt,endedAt,resultEvent,flags[,owner]`, createdAt in base 36,
 * the two later times in milliseconds after it, a resultEvent of the terminal event's millisecond as `-<seq>`),
 * as the hash held them.
 */
export function endedFields(value: string): Record<string, string> {
  const parts = /^([0-9a-z]+),(-?\d*),(-?\d*),([^,]*),([rus]*)(?:,(.*))?$/s.exec(value);
  if (!parts) throw new Error(`a run hash's ended field is not in its shape: ${value}`);
  const [, created36, started, ended, result, flags, owner] = parts;
  const created = parseInt(created36, 36);
  const fields: Record<string, string> = { createdAt: String(created) };
  const after = (delta: string) => String(created + Number(delta));
  if (started !== '') fields.startedAt = after(started);
  if (ended !== '') fields.endedAt = after(ended);
  if (result.startsWith('-')) fields.resultEvent = `${fields.endedAt}${result}`;
  else if (result !== '') fields.resultEvent = result;
  if (flags.includes('r')) fields.replaySafe = 'true';
  else if (flags.includes('u')) fields.replaySafe = 'false';
  if (flags.includes('s')) fields.restartSafe = 'true';
  if (owner !== undefined) fields.owner = owner;
  return fields;
}

/** A run hash's time as a view gives it (ISO 8601, as the log's `at`): kept compact it is milliseconds since 1970. */
function runTime(value: string | undefined): string | null {
  if (value === undefined) return null;
  return /^\d+$/.test(value) ? new Date(Number(value)).toISOString() : value;
}

/** The `result` of an event's stored data ('' or no result: null). */
function resultIn(data: string): CodeModeResult | null {
  if (data === '') return null;
  return (JSON.parse(unpackEventData(data)) as { result?: CodeModeResult }).result ?? null;
}

function parseJson<T>(text: string | undefined): T | null {
  return text === undefined ? null : (JSON.parse(text) as T);
}

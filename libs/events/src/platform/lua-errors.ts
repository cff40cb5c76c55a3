import { RUN_STATUSES, type RunStatus } from '@codemode/contracts';
import {
  EventsError,
  InvalidEventError,
  RunAlreadyEndedError,
  RunExistsError,
  RunHistoryLimitError,
  RunNotFoundError,
  StaleEpochError,
  StoreCommandError,
  TrailNotLandedError,
} from './errors';

/** Return codes of the scripts in lua/ (each script's header lists the ones it uses). */
export const LUA_CODES = {
  ok: 1,
  /** A precondition said no without it being an error (not started, not abandoned, idempotent). */
  declined: 0,
  /** request-run: the session's settings changed since the caller read them; nothing was written. */
  settingsChanged: 2,
  runNotFound: -1,
  runEnded: -2,
  staleEpoch: -3,
  runExists: -4,
  invalidEvent: -5,
  /** append-events: the append raised an error reply (detail) before writing that event. */
  raised: -6,
  /** finish-run: the trail mark it was sent behind is not on the run; nothing was written. */
  trailNotLanded: -7,
} as const;

/** `{code, ...details}` as every script returns it; a Lua false arrives as null. */
export type ScriptReply = [code: number, ...details: (string | null)[]];

/** What the caller was doing, so the typed error can name it. */
export interface ScriptContext {
  runId?: string;
  epoch?: number;
  type?: string;
}

/** The one place that turns a script's error code into a typed error. */
export function luaError(code: number, detail: string | null, ctx: ScriptContext): EventsError {
  const runId = ctx.runId ?? '';
  switch (code) {
    case LUA_CODES.runNotFound:
      return new RunNotFoundError(runId);
    case LUA_CODES.runEnded:
      return new RunAlreadyEndedError(runId, toRunStatus(detail) ?? 'failed');
    case LUA_CODES.staleEpoch:
      return new StaleEpochError(runId, ctx.epoch ?? 0, Number(detail));
    case LUA_CODES.runExists:
      return new RunExistsError(runId);
    case LUA_CODES.invalidEvent:
      return new InvalidEventError(detail ?? ctx.type ?? '');
    case LUA_CODES.trailNotLanded:
      return new TrailNotLandedError(runId);
    default:
      return new StoreCommandError(`script returned unknown code ${code}`);
  }
}

/**
 * Error replies the append path raises (`error({err = ...})` in lua/includes/run-history-cap.lua) where it
 * cannot return a code: deep inside `append_event`, before anything is written.
 * `RUN_HISTORY_LIMIT <runId> <events> <bytes>`: the run's history cap (SPEC §6).
 */
const HISTORY_LIMIT_REPLY = /\bRUN_HISTORY_LIMIT (\S+) (\d+) (\d+)/;

/** The typed error for an error reply a script raised on purpose, or null for any other error. */
export function raisedScriptError(err: unknown): EventsError | null {
  if (!(err instanceof Error)) return null;
  const match = HISTORY_LIMIT_REPLY.exec(err.message);
  return match ? new RunHistoryLimitError(match[1], Number(match[2]), Number(match[3])) : null;
}

/** Checks a raw script reply's shape and throws the typed error for negative codes. */
export function checkReply(raw: unknown, ctx: ScriptContext): ScriptReply {
  if (!Array.isArray(raw) || typeof raw[0] !== 'number') {
    throw new StoreCommandError(`unexpected script reply ${JSON.stringify(raw)}`);
  }
  const reply = raw as ScriptReply;
  if (reply[0] < 0) throw luaError(reply[0], reply[1] ?? null, ctx);
  return reply;
}

/** A status string from Redis, or null when the run does not exist. */
export function toRunStatus(value: string | null | undefined): RunStatus | null {
  return value && (RUN_STATUSES as readonly string[]).includes(value) ? (value as RunStatus) : null;
}

import type { ApiErrorCode, RunStatus } from '@codemode/contracts';

/** The contract code a caller maps an events error to (HTTP status, or a failed CodeModeResult). */
export type EventsErrorCode = ApiErrorCode | 'aborted';

/** Base of every error libs/events throws; `code` is the contract string callers map on. */
export abstract class EventsError extends Error {
  abstract readonly code: EventsErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Thrown when a worker writes for a run with an epoch older than the run's (it lost its lease). */
export class StaleEpochError extends EventsError {
  readonly code = 'conflict';
  constructor(
    readonly runId: string,
    readonly epoch: number,
    readonly storedEpoch: number,
  ) {
    super(`stale epoch ${epoch} for run ${runId}: the run is at epoch ${storedEpoch}`);
  }
}

/** Thrown when a write targets a run that already has its terminal event. */
export class RunAlreadyEndedError extends EventsError {
  readonly code = 'conflict';
  constructor(
    readonly runId: string,
    readonly status: RunStatus,
  ) {
    super(`run ${runId} has already ended (${status})`);
  }
}

/**
 * Thrown when a run's end sent right behind its trailed events (`RunLedger.finish` with a trail
 * mark: finish-run.lua) finds that they did not all land before it: refused at the history cap or
 * for memory, or not arrived yet. Nothing was written; the end is written again once they are
 * settled, as they decide (RunEventWriter.landed).
 */
export class TrailNotLandedError extends EventsError {
  readonly code = 'conflict';
  constructor(readonly runId: string) {
    super(`run ${runId}'s trailed events had not all landed when its end arrived; nothing was written`);
  }
}

/**
 * Thrown when a worker's end that also claims the run (SPEC §13: a cell that ended before its
 * claim was written) finds it no longer `requested`: abandoned by the API, or claimed by another
 * worker. Nothing was written; `status` is the run's (null when there is no run yet).
 */
export class RunNotStartedError extends EventsError {
  readonly code = 'conflict';
  constructor(
    readonly runId: string,
    readonly status: RunStatus | null,
  ) {
    super(`run ${runId} was not started here: it is ${status ?? 'not recorded yet'}`);
  }
}

/** Thrown when a run-scoped write names a run that was never requested in this session. */
export class RunNotFoundError extends EventsError {
  readonly code = 'not_found';
  constructor(readonly runId: string) {
    super(`run ${runId} not found`);
  }
}

/** Thrown when `request` reuses a runId that already exists (runIds are generated, so a bug). */
export class RunExistsError extends EventsError {
  readonly code = 'conflict';
  constructor(readonly runId: string) {
    super(`run ${runId} already exists`);
  }
}

/** SPEC §6: the failure message of a run whose history reached its cap. */
export const RUN_HISTORY_LIMIT_MESSAGE = 'code mode run history limit reached; start a new run.';
/** SPEC §2: what `exec`/`wait` answer when Redis refused a write for memory. */
export const STORE_FULL_MESSAGE =
  'code mode store is full (Redis refused the write for memory); retry later or ask the operator to free memory.';
/** A run whose host call met a Redis outage mid-cell: it is stopped and fails with this (`runtime_unavailable`). */
export const STORE_LOST_MID_RUN_MESSAGE =
  'code mode store became unavailable while the cell ran (Redis did not answer); the run was stopped. Retry in a few seconds.';

/** What a run stopped by a Redis failure of one of its host calls fails with. */
export function storeStopMessage(error: unknown): string {
  return error instanceof StoreFullError ? STORE_FULL_MESSAGE : STORE_LOST_MID_RUN_MESSAGE;
}

/**
 * Thrown when a non-terminal run-scoped write would take the run's history past its cap
 * (SPEC §6: events, or bytes of event data). Nothing was written. Terminal events are never
 * refused, so the caller ends the run with `run.failed`, code `internal_error` and this message.
 */
export class RunHistoryLimitError extends EventsError {
  readonly code = 'internal_error';
  constructor(
    readonly runId: string,
    /** Events the run had written before the refused one. */
    readonly events: number,
    /** Bytes of event data the run had written before the refused one. */
    readonly bytes: number,
  ) {
    super(RUN_HISTORY_LIMIT_MESSAGE);
  }
}

/** Thrown when `after` is not a stream id. */
export class InvalidCursorError extends EventsError {
  readonly code = 'invalid_input';
  constructor(readonly cursor: string) {
    super(`after must be an event id, got ${JSON.stringify(cursor.slice(0, 64))}`);
  }
}

/** Thrown when a caller passes an argument outside its documented range. */
export class InvalidArgumentError extends EventsError {
  readonly code = 'invalid_input';
  constructor(
    readonly argument: string,
    reason: string,
  ) {
    super(`${argument} ${reason}`);
  }
}

/** Thrown when a tenant, session id or prefix would make an ambiguous key. */
export class InvalidKeyError extends EventsError {
  readonly code = 'invalid_input';
  constructor(
    readonly part: 'prefix' | 'tenant' | 'sessionId',
    value: string,
  ) {
    super(`invalid ${part} ${JSON.stringify(value.slice(0, 64))}`);
  }
}

/** Thrown when an event type cannot go through the generic append (it has its own script). */
export class InvalidEventError extends EventsError {
  readonly code = 'internal_error';
  constructor(readonly type: string) {
    super(`event ${type} cannot be appended through the generic path`);
  }
}

/**
 * Thrown when Redis cannot be reached (refused, timed out, offline queue disabled, retries
 * exhausted). Callers answer `runtime_unavailable` (exec/wait) or 503 with Retry-After.
 */
export class StoreUnavailableError extends EventsError {
  readonly code = 'runtime_unavailable';
  constructor(cause: unknown) {
    super('the session store is unavailable; retry shortly', { cause });
  }
}

/**
 * Redis refused a write for memory (`maxmemory` under `noeviction`): an outage to every caller
 * (it is retried, never a bug), answered with its own text (SPEC §2 "store is full").
 */
export class StoreFullError extends StoreUnavailableError {
  constructor(cause: unknown) {
    super(cause);
    this.message = 'the session store is full (Redis refused the write for memory)';
  }
}

/** Thrown when Redis answered with an error nobody expects (a bug, not an outage). */
export class StoreCommandError extends EventsError {
  readonly code = 'internal_error';
  constructor(cause: unknown) {
    super(`store command failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Thrown (as a rejection) when a `RunReplies.waitFor` is aborted by its signal. */
export class ReplyWaitAbortedError extends EventsError {
  readonly code = 'aborted';
  constructor(readonly runId: string) {
    super(`waiting for run ${runId} was aborted`);
    this.name = 'AbortError';
  }
}

/** Thrown when an approval id names no approval of the session (SPEC §11: 404). */
export class ApprovalNotFoundError extends EventsError {
  readonly code = 'not_found';
  constructor(readonly approvalId: string) {
    super(`approval ${approvalId} not found.`);
  }
}

/** Thrown when an approval already has its decision, or its run ended and voided it (SPEC §11: 409). */
export class ApprovalClosedError extends EventsError {
  readonly code = 'conflict';
  constructor(
    readonly approvalId: string,
    readonly why: 'decided' | 'voided' | 'timed_out',
  ) {
    super(
      why === 'decided'
        ? `approval ${approvalId} was already decided.`
        : why === 'timed_out'
          ? `approval ${approvalId} timed out before it was decided; it is denied.`
          : `approval ${approvalId} is void: its run has ended.`,
    );
  }
}

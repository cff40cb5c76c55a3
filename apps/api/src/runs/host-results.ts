import { isStoreFull, STORE_FULL_MESSAGE } from '@codemode/events';
import { RUN_UNAVAILABLE_MESSAGE } from '@codemode/cells';

/** The cell was not run: the call never reached Redis, or what it recorded is ended with this answer. */
export const STORE_UNAVAILABLE_ERROR =
  'code mode store is unavailable (Redis did not answer); the cell was not run. Retry in a few seconds.';
/** SPEC §2: Redis refused a write for memory. */
export const STORE_FULL_ERROR = STORE_FULL_MESSAGE;

/** What `exec`/`wait` answer (`runtime_unavailable`) when Redis failed them before anything ran (storeFailureAnswer): full, or not answering. */
export function storeFailureError(error: unknown): string {
  return isStoreFull(error) ? STORE_FULL_ERROR : STORE_UNAVAILABLE_ERROR;
}

/** SPEC §2: the Idempotency-Key of `exec` and `wait`. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,256}$/;
/** How often a repeated Idempotency-Key looks for the first call's answer. */
export const IDEMPOTENT_POLL_MS = 25;
export const INVALID_IDEMPOTENCY_KEY_ERROR = 'Idempotency-Key must be 1-256 printable ASCII characters.';
export const NO_ANSWER_ERROR =
  'the worker running this cell did not answer within its budget; read GET /v1/sessions/{sid}/runs/{runId} for its outcome.';
export const IDEMPOTENT_PENDING_ERROR =
  'the first request with this Idempotency-Key is still running; repeat the request to get its answer.';

/** SPEC §3: a `wait` on a run that has ended names where its outcome is read. */
export function endedRunError(sessionId: string, runId: string): string {
  return `${RUN_UNAVAILABLE_MESSAGE} Read its outcome with GET /v1/sessions/${sessionId}/runs/${runId}.`;
}

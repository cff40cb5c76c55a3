export const STORE_UNAVAILABLE_ERROR =
  'code mode store is unavailable (Redis did not answer); nothing was run or recorded. Retry in a few seconds.';
export const NO_ANSWER_ERROR =
  'the worker running this cell did not answer within its budget; read GET /v1/sessions/{sid}/runs/{runId} for its outcome.';
export const IDEMPOTENT_PENDING_ERROR =
  'the first request with this Idempotency-Key is still running; repeat the request to get its answer.';

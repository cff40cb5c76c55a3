/**
 * Errors of libs/store. Guest-facing ones carry the JavaScript error `name` the guest must see
 * (`TypeError`, `RangeError`, `Error`) and the exact SPEC/OpenClaw message, so the host can
 * reject the guest call with `${name}: ${message}`; `code` names the failure for host code.
 */

export const STORE_KEY_MESSAGE = 'Code Mode store key must be a non-empty string of at most 256 characters.';
export const STORE_VALUE_TOO_LARGE_MESSAGE = 'Code Mode store value exceeds 256 KiB of serialized JSON.';
export const STORE_FULL_MESSAGE = 'Code Mode store exceeds 1 MiB of serialized JSON; delete keys or store less data.';
export const RESULTS_FULL_MESSAGE =
  'Code Mode results capacity exceeded; delete saved references or save a smaller value. Existing references are unchanged.';
export const RESULT_UNAVAILABLE_MESSAGE = 'Code Mode result is unavailable or expired; fetch fresh data if needed.';
export const RESULT_ID_MESSAGE = 'results reference id must be a non-empty string.';

export type GuestErrorName = 'TypeError' | 'RangeError' | 'Error';

export type StoreErrorCode =
  | 'store_key_invalid'
  | 'store_value_not_serializable'
  | 'store_value_too_large'
  | 'store_full'
  | 'results_full'
  | 'result_unavailable'
  | 'result_id_invalid'
  | 'result_value_invalid'
  | 'invalid_argument';

/** Base of every error libs/store throws. */
export abstract class StoreError extends Error {
  abstract readonly code: StoreErrorCode;
  abstract override readonly name: GuestErrorName;
}

/** Thrown when a store key is not a non-empty string of at most 256 characters. */
export class StoreKeyError extends StoreError {
  readonly code = 'store_key_invalid';
  override readonly name = 'TypeError';
  constructor() {
    super(STORE_KEY_MESSAGE);
  }
}

/** Thrown when a store value cannot be serialized as JSON (a cycle, a BigInt). */
export class StoreValueNotSerializableError extends StoreError {
  readonly code = 'store_value_not_serializable';
  override readonly name = 'TypeError';
  constructor(reason: string) {
    super(`Code Mode store value must be JSON-serializable: ${reason}`);
  }
}

/** Thrown when one store value is over 256 KiB of UTF-8 JSON. */
export class StoreValueTooLargeError extends StoreError {
  readonly code = 'store_value_too_large';
  override readonly name = 'RangeError';
  constructor(readonly bytes: number) {
    super(STORE_VALUE_TOO_LARGE_MESSAGE);
  }
}

/**
 * Thrown when a write would take the whole store over 1 MiB of value JSON: by `StoreBuffer.set`
 * against the run's view, and by `SessionStore.commit` when a concurrent commit filled the store
 * first (then nothing of the cell's writes is committed).
 */
export class StoreCapacityError extends StoreError {
  readonly code = 'store_full';
  override readonly name = 'RangeError';
  constructor(readonly wouldBe: number) {
    super(STORE_FULL_MESSAGE);
  }
}

/** Thrown when a results reference cannot be kept: 64 live references, or their shared bytes full. */
export class ResultsCapacityError extends StoreError {
  readonly code = 'results_full';
  override readonly name = 'Error';
  constructor(readonly reason: 'count' | 'bytes') {
    super(RESULTS_FULL_MESSAGE);
  }
}

/** Thrown when `results.load` names an id that is unknown here, deleted or expired. */
export class ResultUnavailableError extends StoreError {
  readonly code = 'result_unavailable';
  override readonly name = 'Error';
  constructor() {
    super(RESULT_UNAVAILABLE_MESSAGE);
  }
}

/** Thrown when a results reference id is not a non-empty string. */
export class ResultIdError extends StoreError {
  readonly code = 'result_id_invalid';
  override readonly name = 'TypeError';
  constructor() {
    super(RESULT_ID_MESSAGE);
  }
}

/** Thrown when the host hands `results.save` text that is not JSON (a host bug, not a guest one). */
export class ResultValueError extends StoreError {
  readonly code = 'result_value_invalid';
  override readonly name = 'TypeError';
  constructor(reason: string) {
    super(`results value must be JSON text: ${reason}`);
  }
}

/** Thrown when a caller passes an argument outside its documented range (a host bug). */
export class StoreArgumentError extends StoreError {
  readonly code = 'invalid_argument';
  override readonly name = 'Error';
  constructor(
    readonly argument: string,
    reason: string,
  ) {
    super(`${argument} ${reason}`);
  }
}

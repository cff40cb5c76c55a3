/** Exact strings of SPEC §3 Output truncation, defined once. */
export const OUTPUT_TRUNCATED_TEXT = '[output truncated]';
export const ERROR_TRUNCATED_SUFFIX = ' [error truncated]';
export const PREFIX_GUIDANCE = 'Output truncated; rerun with narrower args.';
export const RESTART_SAFE_GUIDANCE = 'Not retained in restart-safe mode. Return less data.';
export const REFERENCE_GUIDANCE =
  'Result too large to return inline; it was saved as a results reference. Read it with await results.load(reference.id).';
export const OUTPUT_LIMIT_EXCEEDED_ERROR = 'code mode output limit exceeded';
/** `results.save` descriptors are at most this many bytes (SPEC §4 `results`). */
export const MAX_REFERENCE_DESCRIPTOR_BYTES = 768;

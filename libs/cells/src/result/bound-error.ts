import { ERROR_TRUNCATED_SUFFIX } from './truncation-text';
import { jsonBytes, longestFittingPrefix } from './utf8-json';

/**
 * Fits a failure diagnostic into `limitBytes` of UTF-8 JSON (the string with its quotes and
 * escapes). An oversized error keeps its leading cause and ends with ` [error truncated]`; like
 * OpenClaw, the suffix is kept even when nothing else fits, so a failure never reads as complete.
 */
export function boundError(error: string, limitBytes: number): string {
  if (jsonBytes(error) <= limitBytes) return error;
  // Every UTF-16 unit costs at least one JSON byte, so no fitting prefix is longer than the limit.
  const searchable = error.slice(0, Math.max(0, limitBytes));
  const prefix = longestFittingPrefix(searchable, (candidate) => jsonBytes(candidate + ERROR_TRUNCATED_SUFFIX) <= limitBytes);
  return prefix + ERROR_TRUNCATED_SUFFIX;
}

export { ConsoleBudget, CONSOLE_CAP_UNITS, CONSOLE_TRUNCATED_TEXT } from './console-budget';
export { buildCellResult, failedInputResult, hostFailureResult, emptyTelemetry, owedAnswerResult } from './cell-result';
export type { BuildCellResultInput, BuiltCellResult } from './cell-result';
export {
  OUTPUT_TRUNCATED_TEXT,
  ERROR_TRUNCATED_SUFFIX,
  PREFIX_GUIDANCE,
  RESTART_SAFE_GUIDANCE,
  REFERENCE_GUIDANCE,
  OUTPUT_LIMIT_EXCEEDED_ERROR,
} from './truncation-text';
export { boundError } from './bound-error';
export { boundOutput } from './bound-output';
export { prefixMarker } from './value-marker';
export * from './waiting-result';
export { failedOutcome, type LegFailure } from './failed-outcome';

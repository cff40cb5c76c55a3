import type { CodeModeErrorCode, CodeModeOutput, CodeModeResult, FailurePhase, Limits, Telemetry } from '@codemode/contracts';
import type { TerminalCellOutcome as CellOutcome } from '../outcome';
import { boundError } from './bound-error';
import { boundOutput, type BoundedOutput } from './bound-output';
import { OUTPUT_LIMIT_EXCEEDED_ERROR, PREFIX_GUIDANCE, RESTART_SAFE_GUIDANCE } from './truncation-text';
import { jsonBytes, utf8Bytes } from './utf8-json';
import { isContainerJson, prefixMarker, REFERENCE_MARKER_RESERVE, referenceMarker } from './value-marker';

export interface BuildCellResultInput {
  outcome: CellOutcome;
  limits: Pick<Limits, 'maxOutputBytes'>;
  restartSafe: boolean;
  telemetry: Telemetry;
  /** UTF-8 JSON bytes of output already returned by earlier exec/wait calls of this run. */
  priorOutputBytes: number;
  /** Optional: save an oversized object/array as a results reference; descriptor or null. */
  saveReference?: (valueJson: string) => Promise<Record<string, unknown> | null>;
}

export interface BuiltCellResult {
  result: CodeModeResult;
  /** UTF-8 bytes of the `output` array returned now (0 when omitted); add to `priorOutputBytes`. */
  outputBytes: number;
}

/**
 * Turns a cell outcome into the result the client sees (SPEC §3 Output).
 *
 * Budget: output, value and error share `maxOutputBytes - priorOutputBytes` bytes of UTF-8 JSON.
 * The split follows OpenClaw's projector — a short channel donates its unused share, and the
 * terminal channel is guaranteed half of what is left when it needs it:
 * - failed: the error may use everything except `min(outputBytes, half)`; output gets the rest
 *   after the (possibly cut) error;
 * - completed: output may use everything except `min(valueBytes, half)`; the value gets the rest
 *   after the (possibly cut) output.
 * Output is cut at entry boundaries, the error keeps its leading cause, an oversized value becomes
 * a marker. `output_limit_exceeded` only when not even a value marker fits after all output is
 * dropped.
 */
export async function buildCellResult(input: BuildCellResultInput): Promise<BuiltCellResult> {
  const available = Math.max(0, input.limits.maxOutputBytes - Math.max(0, input.priorOutputBytes));
  const { outcome } = input;
  if (outcome.status === 'failed') {
    const outputWant = boundOutput(outcome.output, Number.MAX_SAFE_INTEGER).bytes;
    const error = boundError(outcome.error, available - Math.min(outputWant, Math.floor(available / 2)));
    const output = boundOutput(outcome.output, available - jsonBytes(error));
    return failed(input, { error, code: outcome.code, phase: outcome.phase }, output);
  }

  const valueBytes = utf8Bytes(outcome.valueJson);
  const output = boundOutput(outcome.output, available - Math.min(valueBytes, Math.floor(available / 2)));
  const value = await projectValue(input, outcome.valueJson, available - output.bytes);
  if (value.fits) return completed(input, value.value, output);
  // Not even a marker fits beside the kept output: the value matters more, so drop the output.
  const alone = await projectValue(input, outcome.valueJson, available);
  if (alone.fits) return completed(input, alone.value, boundOutput([], 0));
  // The limit message itself is never cut: it is the floor every result can carry.
  const rest = boundOutput(outcome.output, available - jsonBytes(OUTPUT_LIMIT_EXCEEDED_ERROR));
  return failed(input, { error: OUTPUT_LIMIT_EXCEEDED_ERROR, code: 'output_limit_exceeded', phase: 'host' }, rest);
}

type Projection = { fits: true; value: unknown } | { fits: false };

async function projectValue(input: BuildCellResultInput, valueJson: string, limitBytes: number): Promise<Projection> {
  if (utf8Bytes(valueJson) <= limitBytes) return { fits: true, value: JSON.parse(valueJson) as unknown };
  const canReference =
    input.saveReference !== undefined && !input.restartSafe && isContainerJson(valueJson) && limitBytes >= REFERENCE_MARKER_RESERVE;
  if (canReference && input.saveReference) {
    const reference = await input.saveReference(valueJson);
    if (reference) {
      const marker = referenceMarker(reference);
      if (jsonBytes(marker) <= limitBytes) return { fits: true, value: marker };
    }
  }
  const guidance = input.restartSafe ? RESTART_SAFE_GUIDANCE : PREFIX_GUIDANCE;
  const marker = prefixMarker(valueJson, guidance, limitBytes);
  return marker ? { fits: true, value: marker } : { fits: false };
}

function outputField(output: BoundedOutput): { output?: CodeModeOutput[] } {
  return output.entries.length > 0 ? { output: output.entries } : {};
}

function completed(input: BuildCellResultInput, value: unknown, output: BoundedOutput): BuiltCellResult {
  const result: CodeModeResult = {
    status: 'completed',
    value,
    ...outputField(output),
    replaySafe: input.restartSafe,
    telemetry: input.telemetry,
  };
  return { result, outputBytes: output.bytes };
}

function failed(
  input: BuildCellResultInput,
  failure: { error: string; code: CodeModeErrorCode; phase: FailurePhase },
  output: BoundedOutput,
): BuiltCellResult {
  const result: CodeModeResult = {
    status: 'failed',
    error: failure.error,
    code: failure.code,
    failurePhase: failure.phase,
    bridgeDispatchStarted: input.outcome.bridgeDispatchStarted,
    ...outputField(output),
    replaySafe: input.restartSafe,
    telemetry: input.telemetry,
  };
  return { result, outputBytes: output.bytes };
}

/** A refused exec/wait input (SPEC §3 input rules): nothing ran, nothing was dispatched. */
export function failedInputResult(error: string, telemetry: Telemetry, replaySafe: boolean): CodeModeResult {
  return {
    status: 'failed',
    error,
    code: 'invalid_input',
    failurePhase: 'input',
    bridgeDispatchStarted: false,
    replaySafe,
    telemetry,
  };
}

/** A failure the host decided rather than the cell (outage, lost worker, recovery failure). */
export function hostFailureResult(
  error: string,
  code: CodeModeErrorCode,
  replaySafe: boolean,
  bridgeDispatchStarted = false,
): CodeModeResult {
  return { status: 'failed', error, code, failurePhase: 'host', bridgeDispatchStarted, replaySafe, telemetry: emptyTelemetry() };
}

/**
 * SPEC §16: the answer of a call whose restartSafe leg was still running (rebuilt after its worker
 * died, or slow) past its budget plus the reply grace: the leg's outcome is owed to the next `wait`.
 */
export function owedAnswerResult(runId: string): CodeModeResult {
  return { status: 'waiting', runId, reason: 'pending_tools', replaySafe: true, telemetry: emptyTelemetry() };
}

/**
 * Telemetry before any catalog exists. OpenClaw reports its catalog session's `counterScope`
 * string; counters here are counted per run, so the scope is `run`.
 */
export function emptyTelemetry(): Telemetry {
  return {
    catalogSize: 0,
    sources: { openclaw: 0, mcp: 0, client: 0 },
    searchCount: 0,
    describeCount: 0,
    callCount: 0,
    counterScope: 'run',
    visibleTools: ['exec', 'wait'],
  };
}

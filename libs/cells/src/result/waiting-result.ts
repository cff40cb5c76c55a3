import type { BridgeMethod, CodeModeOutput, PendingToolCall, Telemetry, WaitingResult } from '@codemode/contracts';
import { boundOutput } from './bound-output';
import { jsonBytes } from './utf8-json';

/** A bridge request still unsettled when the cell parked. */
export interface UnsettledCall {
  id: string;
  method: BridgeMethod;
  args: unknown;
}

export interface BuildWaitingResultInput {
  runId: string;
  reason: 'yield' | 'pending_tools';
  pending: readonly UnsettledCall[];
  output: readonly CodeModeOutput[];
  limits: { maxOutputBytes: number };
  restartSafe: boolean;
  telemetry: Telemetry;
  /** UTF-8 JSON bytes of output already returned by earlier exec/wait calls of this run. */
  priorOutputBytes: number;
}

/**
 * A parked cell's answer (SPEC §3 Suspension): only unsettled calls are listed, with `tool` and
 * `input` when the call names them, and output shares what is left of the run's output budget.
 */
export function buildWaitingResult(input: BuildWaitingResultInput): { result: WaitingResult; outputBytes: number } {
  const pendingToolCalls = input.pending.map(toPendingToolCall);
  const available = Math.max(0, input.limits.maxOutputBytes - Math.max(0, input.priorOutputBytes));
  const output = boundOutput(input.output, available - (pendingToolCalls.length > 0 ? jsonBytes(pendingToolCalls) : 0));
  const result: WaitingResult = {
    status: 'waiting',
    runId: input.runId,
    reason: input.reason,
    ...(pendingToolCalls.length > 0 ? { pendingToolCalls } : {}),
    ...(output.entries.length > 0 ? { output: output.entries } : {}),
    replaySafe: input.restartSafe,
    telemetry: input.telemetry,
  };
  return { result, outputBytes: output.bytes };
}

function toPendingToolCall(call: UnsettledCall): PendingToolCall {
  const args = typeof call.args === 'object' && call.args !== null ? (call.args as Record<string, unknown>) : {};
  if (call.method === 'namespace') {
    // SPEC §5: an MCP call names itself `MCP.<server>.<callable>`, with its one object argument as input.
    const first: unknown = Array.isArray(args.args) ? args.args[0] : undefined;
    return {
      id: call.id,
      method: call.method,
      ...(typeof args.callableName === 'string' ? { tool: args.callableName } : {}),
      input: first ?? {},
    };
  }
  return {
    id: call.id,
    method: call.method,
    ...(typeof args.tool === 'string' ? { tool: args.tool } : {}),
    ...('input' in args ? { input: args.input } : {}),
  };
}

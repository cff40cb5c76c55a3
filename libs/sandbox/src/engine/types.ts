import type { BridgeMethod, CodeModeErrorCode, CodeModeOutput, FailurePhase, Limits } from '@codemode/contracts';

/** One cell to run: the body of an async function, sloppy mode, `this === globalThis`. */
export interface CellRunRequest {
  runId: string;
  code: string;
  limits: Limits;
}

/** A request the guest made through the bridge; `id` is `bridge:<method>:<n>`, n counts from 1 per run. */
export interface BridgeCall {
  id: string;
  method: BridgeMethod;
  args: unknown;
}

/**
 * Host side of the bridge for methods other than `sleep` (later issues add tools). Resolve → the
 * guest promise resolves with the JSON value; reject with an Error → the guest promise rejects
 * with an Error of the same name and message. `signal` aborts when the run ends.
 */
export interface BridgeHost {
  dispatch(call: BridgeCall, signal: AbortSignal): Promise<unknown>;
}

interface OutcomeCommon {
  output: CodeModeOutput[];
  /** Console entries hit the per-run cap (SPEC §3 Output). */
  consoleTruncated: boolean;
  /** At least one bridge request was dispatched to the host. */
  bridgeDispatchStarted: boolean;
}

/** What one cell run ended with. `valueJson` is compact JSON made inside the guest. */
export type CellOutcome =
  | ({ status: 'completed'; valueJson: string } & OutcomeCommon)
  | ({ status: 'failed'; error: string; code: CodeModeErrorCode; phase: FailurePhase } & OutcomeCommon);

export type SandboxVariant = 'release' | 'debug';

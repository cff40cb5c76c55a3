import type { BridgeMethod, CodeModeErrorCode, CodeModeOutput, FailurePhase, LegJournal } from '@codemode/contracts';

/*
 * What a run/resume leg of a cell ends with, as plain data: the sandbox engine produces it, the
 * worker records it and shapes it into the run's result (`result/`).
 */

/**
 * A request the guest made through the bridge; `id` is `bridge:<method>:<n>`, n counting from 1
 * per method within one run (as OpenClaw's snapshotted per-method counters do).
 */
export interface BridgeCall {
  id: string;
  method: BridgeMethod;
  args: unknown;
  /**
   * A tool call's (callValue, namespace) n of its callKey `<runId>:<n>` (SPEC §16): counting every
   * tool call of the run from 1 in the order the guest made them, so the same on every replay.
   */
  callNumber?: number;
}

/** An unsettled bridge request of a waiting run (`args` as the guest sent them; shapes in libs/sandbox/ARCHITECTURE.md). */
export type PendingCall = BridgeCall;

/** A parked run's image (SPEC §12) and what it is bound to. */
export interface ParkedImage {
  /** The compressed envelope (libs/sandbox `engine/parked-image.ts`); its length is the run's snapshot size. */
  bytes: Uint8Array;
  wasmHash: string;
  preludeVersion: string;
  /** Open calls that were dispatched (not queued, not yields) when the run parked. */
  inFlight: string[];
}

interface OutcomeCommon {
  /** Output produced during this leg only (earlier legs' output is not repeated). */
  output: CodeModeOutput[];
  /** Console entries hit the per-run cap (SPEC §3 Output). */
  consoleTruncated: boolean;
  /** At least one bridge request (other than a yield) was dispatched during the run. */
  bridgeDispatchStarted: boolean;
  /** restartSafe runs: what this leg did, for its `run.parked` event (see LegJournal). */
  journal?: LegJournal;
}

export type CompletedOutcome = { status: 'completed'; valueJson: string } & OutcomeCommon;
export type FailedOutcome = { status: 'failed'; error: string; code: CodeModeErrorCode; phase: FailurePhase } & OutcomeCommon;
/** The VM is parked in its thread; `pending` lists only unsettled calls. */
export type WaitingOutcome = {
  status: 'waiting';
  reason: 'yield' | 'pending_tools';
  pending: PendingCall[];
  /** Non-zero 4 KiB pages of the parked VM's wasm memory × 4096; with an image, its compressed bytes. */
  snapshotBytes: number;
  /** The parked VM's wasm memory size: what it holds while it stays in memory (SPEC §10 "Parked memory"). */
  memoryBytes: number;
  /** The run's image, when the request asked for one and the VM could be captured (SPEC §12). */
  image?: ParkedImage;
} & OutcomeCommon;

/** What one run/resume leg ended with. `valueJson` is compact JSON made inside the guest. */
export type CellOutcome = CompletedOutcome | FailedOutcome | WaitingOutcome;
/** An outcome that ends the run (what `buildCellResult` shapes). */
export type TerminalCellOutcome = CompletedOutcome | FailedOutcome;

import type { BridgeMethod, CodeModeErrorCode, CodeModeOutput, FailurePhase, LegJournal, Limits, ReplayPlan } from '@codemode/contracts';

/** One cell to run: the body of an async function, sloppy mode, `this === globalThis`. */
export interface CellRunRequest {
  runId: string;
  code: string;
  limits: Limits;
  /** Never park: yields resolve at once and the budget renews while host work is pending (SPEC §3). */
  awaitResults?: boolean;
  /**
   * The session's catalog as this cell sees it (SPEC §4/§5), a `GuestCatalog` as JSON text (a
   * string crosses to the sandbox thread in one copy, and the guest parses it as it is): one async
   * global (a tool handle) per `globals[i]` under its callable name (names that are already globals
   * are skipped), `catalog.all()`, and `MCP.<serverIdentifier>.<toolIdentifier>`. Absent: no tool
   * globals, an empty `MCP`. Bridge argument shapes are listed in ARCHITECTURE.md ("Guest API → bridge").
   */
  catalogJson?: string;
  /**
   * SPEC §5: only replay-safe surfaces may be called (search, describe, yield, sleep, api, and
   * `callValue` of a `globals[i]` with `replaySafe: true`). Anything else is never dispatched and
   * fails the cell `invalid_input` (uncatchable by the guest).
   */
  restartSafe?: boolean;
  /**
   * restartSafe runs (SPEC §6): `Math.random` is sfc32 seeded with these four words and `Date`
   * reads "now" from the host, which records each value, so a replay sees the same ones.
   */
  seed?: number[];
  /**
   * Rebuild the run from its log before going on: the recorded legs are re-run against their
   * journals (nothing dispatched, every call checked against the record; a difference fails the
   * run as a divergence), then the run continues live, as a resumed leg when it had parked.
   */
  replay?: ReplayPlan;
  /**
   * SPEC §12: when the cell parks, capture its VM and host state as an image (`WaitingOutcome.image`);
   * the image's compressed size is then what `maxSnapshotBytes` limits.
   */
  parkImage?: boolean;
}

/**
 * How a parked run restored from its image (SPEC §12) settles the calls that were open at its park;
 * open calls in none of these lists are timers (re-armed for their due time), yields, or queued.
 */
export interface RestorePlan {
  /** Settlements the log recorded (platform answers, recorded results), applied as if they had just arrived. */
  answers: Settlement[];
  /** In-flight calls made again (replay-safe tools and host surfaces). */
  redo: string[];
  /** In-flight calls still waiting for the platform's answer (`SandboxPool.settle`). */
  platform: string[];
}

/** A parked run's image (SPEC §12) and what it is bound to. */
export interface ParkedImage {
  /** The compressed envelope (`engine/parked-image.ts`); its length is the run's snapshot size. */
  bytes: Uint8Array;
  wasmHash: string;
  preludeVersion: string;
  /** Open calls that were dispatched (not queued, not yields) when the run parked. */
  inFlight: string[];
}

/** How a parked run continues: a fresh budget for this leg. */
export interface ResumeOptions {
  timeoutMs: number;
  awaitResults?: boolean;
}

/**
 * A request the guest made through the bridge; `id` is `bridge:<method>:<n>`, n counting from 1
 * per method within one run (as OpenClaw's snapshotted per-method counters do).
 */
export interface BridgeCall {
  id: string;
  method: BridgeMethod;
  args: unknown;
}

/** An unsettled bridge request of a waiting run (`args` as the guest sent them; shapes in ARCHITECTURE.md). */
export type PendingCall = BridgeCall;

/** The host's answer to one bridge request, as the run queues it; `payload` is JSON (the value, or `{name,message}`). */
export interface Settlement {
  id: string;
  ok: boolean;
  payload: string;
}

/** The answer to a platform-answered call, given to `SandboxPool.settle`. */
export type ExternalSettlement = { ok: true; value: unknown } | { ok: false; error: { name?: string; message: string } };

/**
 * Host side of the bridge for methods other than `sleep` and `yield`. Resolve → the guest promise
 * resolves with the JSON value; reject with an Error → the guest promise rejects with an Error of
 * the same name and message. `signal` aborts when the run ends or is discarded.
 */
/**
 * Lets a dispatched call step aside while an outside decision is pending (SPEC §11 approvals):
 * held, it gives up its in-flight slot (queued calls start), and while the run is idle and every
 * unsettled call is held, the run's budget clock stops.
 */
export interface CallGate {
  /** The call waits for a decision from now on. */
  hold(): void;
  /** Approved: resolves once the call holds an in-flight slot again (at once, or when one frees). */
  resume(): Promise<void>;
  /** From now on only the platform answers the call (`SandboxPool.settle`), as if `answeredByPlatform` had said so. */
  handToPlatform(): void;
}

export interface BridgeHost {
  /** `gate` lets the call step aside while it waits for a decision (a denied call just rejects). */
  dispatch(call: BridgeCall, signal: AbortSignal, gate?: CallGate): Promise<unknown>;
  /**
   * True for calls only the platform can answer (client tools without endpoint): they are not
   * dispatched; their answer comes through `SandboxPool.settle`. When the VM is idle and every
   * unsettled call is such a call (or a yield), the cell parks at once instead of spending its
   * budget. Not consulted in `awaitResults` legs (there `dispatch` gets the call and rejects it).
   */
  answeredByPlatform?(call: BridgeCall): boolean;
  /** The run was rebuilt from its log (`CellRunRequest.replay`) and its live leg starts now. */
  replayed?(): void;
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

export type SandboxVariant = 'release' | 'debug';

/** Where the run sends bridge traffic and watchdog hints (in a thread: messages to the pool). */
export interface BridgePort {
  dispatch(id: string, method: BridgeMethod, argsJson: string): void;
  cancel(id: string): void;
  /** The leg spends budget from now for `timeoutMs` (arm the watchdog); undefined: it waits without budget. */
  watch(timeoutMs: number | undefined): void;
  /** The thread is (or stops) executing this run's guest code synchronously: watchdog attribution. */
  busy(on: boolean): void;
  /** The pool asked to abort this run (read from shared memory: seen even while guest code runs). */
  abortRequested(): boolean;
  /** The recorded legs were re-run; the live leg, with its own budget, starts now. */
  replayed(): void;
  /** A held call (CallGate) holds an in-flight slot again: its host may dispatch it now. */
  admitted(id: string): void;
}

export interface LegOptions {
  timeoutMs: number;
  awaitResults: boolean;
  /** When the leg's budget started (the request's arrival in the thread). */
  startedAt?: number;
}

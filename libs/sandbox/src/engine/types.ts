import type {
  BridgeMethod,
  CodeModeErrorCode,
  CodeModeOutput,
  FailurePhase,
  GuestCatalog,
  LegJournal,
  Limits,
  ReplayPlan,
} from '@codemode/contracts';

/** One cell to run: the body of an async function, sloppy mode, `this === globalThis`. */
export interface CellRunRequest {
  runId: string;
  code: string;
  limits: Limits;
  /** Never park: yields resolve at once and the budget renews while host work is pending (SPEC §3). */
  awaitResults?: boolean;
  /**
   * The session's catalog as this cell sees it (SPEC §4/§5): one async global (a tool handle) per
   * `globals[i]` under its callable name (names that are already globals are skipped),
   * `catalog.all()`, and `MCP.<serverIdentifier>.<toolIdentifier>`. Absent: no tool globals, an
   * empty `MCP`. Bridge argument shapes are listed in ARCHITECTURE.md ("Guest API → bridge").
   */
  catalog?: GuestCatalog;
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
export interface BridgeHost {
  dispatch(call: BridgeCall, signal: AbortSignal): Promise<unknown>;
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
  /** Non-zero 4 KiB pages of the parked VM's wasm memory × 4096. */
  snapshotBytes: number;
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
}

export interface LegOptions {
  timeoutMs: number;
  awaitResults: boolean;
  /** When the leg's budget started (the request's arrival in the thread). */
  startedAt?: number;
}

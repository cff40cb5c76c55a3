import type { BridgeCall } from '@codemode/cells';
import type { BridgeMethod, Limits, ReplayPlan } from '@codemode/contracts';

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

/** How a parked run continues: a fresh budget for this leg. */
export interface ResumeOptions {
  timeoutMs: number;
  awaitResults?: boolean;
}

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
  /**
   * While the run is not claimed yet (SPEC §13: a cell may start before its claim is written),
   * what every request waits for before it is made: the claim (its rejection is the request's);
   * undefined once the run is claimed, or when it never waits.
   */
  beforeDispatch?(): Promise<void> | undefined;
}

export type SandboxVariant = 'release' | 'debug';

/** Where the run sends bridge traffic and watchdog hints (in a thread: messages to the pool). */
export interface BridgePort {
  /** `callNumber`: the n of a tool call's callKey (SPEC §16). */
  dispatch(id: string, method: BridgeMethod, argsJson: string, callNumber?: number): void;
  cancel(id: string): void;
  /** The leg spends budget from now for `timeoutMs` (arm the watchdog); undefined: it waits without budget. Its end (the outcome) disarms it. */
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

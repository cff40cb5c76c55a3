import type { EventData } from '@codemode/contracts';
import type { CatalogEntry } from '@codemode/catalog';
import type { BridgeCall } from '@codemode/cells';
import type { CallGate, ExternalSettlement } from '@codemode/sandbox';
import type { SessionToolCatalog } from '@codemode/tools';
import type { ToolRun } from '../tool-run';

/** A tool a run's call names, as the pipeline resolved it: what a kind decides on. */
export interface ResolvedTool {
  entry: CatalogEntry;
  run: ToolRun;
  catalog: SessionToolCatalog;
}

/** One call of a tool, admitted by the run's policy: what a kind answers. */
export interface KindCall extends ResolvedTool {
  call: BridgeCall;
  input: unknown;
  /** Aborted when the run is discarded (ended, handed over): the call gives up. */
  signal: AbortSignal;
  gate: CallGate | undefined;
  /** SPEC §16's `<runId>:<n>`, the call's idempotency key; absent when the sandbox did not number it. */
  callKey: string | undefined;
  /** What is left of the leg's budget now (ms, never below 0): the longest a call may take. */
  budgetLeft: () => number;
  /** The sandbox's bridge took the call aside for the platform before it was dispatched (`parksOnBridge`). */
  handedOver: boolean;
}

/** What `tool.called` records of a call beyond the fields every call has. */
export type CalledDetail = Pick<EventData<'tool.called'>, 'node' | 'command'>;

/**
 * One kind of tool call (apps/worker/ARCHITECTURE.md "Tool calls"): which tools it owns, who
 * answers their calls, how one is made, and what `tool.called` records of it. `ToolCallPipeline`
 * does the rest, alike for every kind: resolution, policy and approval, `tool.called` with the
 * call key, and for calls the worker answers `tool.settled` (replay-safe runs keep the outcome).
 */
export interface ToolKind {
  /**
   * `worker`: `call` answers, and the pipeline records its outcome as `tool.settled`. `platform`:
   * `call` returns the wait for the platform's answer (POST …/tool-results records it), and
   * `tool.called` says `answeredBy: 'platform'`.
   */
  readonly answeredBy: 'worker' | 'platform';
  /**
   * Its calls are made in this process and seen by nobody outside it (the workspace reads): one
   * that changes nothing (`RepeatableCalls.changesNothing`) is recorded once it answered, its
   * `tool.called` with its `tool.settled` (`ToolCallPipeline`). A call that a party outside sees
   * (a webhook's endpoint, an MCP server, a node) is recorded as called before that party sees
   * it, replay-safe or not, so the log holds every call the party saw.
   */
  readonly inProcess?: boolean;
  /** Whether calls of this tool in this run are this kind's (the registry's first that says so owns them). */
  handles(tool: ResolvedTool): boolean;
  /** What `tool.called` records of the call beyond the common fields. */
  called?(tool: ResolvedTool, input: unknown): CalledDetail;
  /** Makes the call; a throw is its rejection in the guest (its message as the Error's). */
  call(call: KindCall): Promise<unknown>;
  /** The sandbox's bridge takes an allowed call of this tool aside for the platform before dispatch (a parking run). */
  parksOnBridge?(tool: ResolvedTool): boolean;
  /** `tool.called` of an awaited call could not be written: stop waiting for its answer. */
  withdraw?(callId: string): void;
  /** `callId` waits in flight, here, for the platform's answer. */
  awaits?(callId: string): boolean;
  /** The platform's answer to such a call; false when none waits here. */
  settle?(callId: string, outcome: ExternalSettlement): boolean;
}

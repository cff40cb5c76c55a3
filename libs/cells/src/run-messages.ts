/*
 * The strings a run reports verbatim (SPEC §3, §5, §6, §10), in one place for every process that
 * produces or checks them: the sandbox engine and pool, the worker, the API.
 */

/** SPEC §3 strings the executor reports verbatim. */
export const TIMEOUT_MESSAGE = 'code mode timeout exceeded';
export const MODULE_ACCESS_MESSAGE = 'code mode module access is disabled.';
export const PENDING_WITHOUT_HOST_WORK_MESSAGE = 'code mode promise is pending without host work';
/** SPEC §3: requests that may wait for an in-flight slot, per run. */
export const MAX_QUEUED_BRIDGE_REQUESTS = 128;
/** SPEC §3: a request past the bridge queue fails the cell (`invalid_input`, phase `guest`). */
export function bridgeQueueLimitMessage(maxPendingToolCalls: number): string {
  return (
    `code mode bridge queue limit exceeded (${MAX_QUEUED_BRIDGE_REQUESTS} ordinary requests queued; ${maxPendingToolCalls} in-flight slots). ` +
    'Await smaller batches before creating more tool calls or timers.'
  );
}
/** SPEC §3: how unbounded recursion fails a cell (QuickJS itself says `InternalError: stack overflow`). */
export const STACK_OVERFLOW_TEXT = 'RangeError: Maximum call stack size exceeded';
export const NOT_STARTED_MESSAGE = 'no worker started the cell within its budget; it was not run.';
export const SET_TIMEOUT_DELAY_MESSAGE = 'setTimeout delay must be a non-negative finite number.';
export const TOO_MANY_SUSPENDED_MESSAGE = 'too many suspended code mode runs.';
export const SNAPSHOT_LIMIT_MESSAGE = 'code mode snapshot limit exceeded';
export const ABORTED_MESSAGE = 'code mode execution aborted';
export const RUN_UNAVAILABLE_MESSAGE = 'code mode run is unavailable or expired.';
export const RUN_BUSY_MESSAGE = 'code mode run is already being resumed.';
/** SPEC §5: a restartSafe cell called an MCP/namespace tool (never dispatched). */
export const RESTART_SAFE_NAMESPACE_MESSAGE = 'restart-safe code mode cannot call namespace tools.';
/** SPEC §5: a restartSafe cell called any other surface that is not replay-safe (never dispatched). */
export const RESTART_SAFE_SURFACE_MESSAGE =
  'restart-safe code mode cannot call tool surfaces that are not proven replay-safe; use audited read, grep, or find tools.';
/** Prefix of the TypeError a `store`/`results.save` value that JSON cannot represent rejects with. */
export const VALUE_NOT_SERIALIZABLE_PREFIX = 'code mode value is not JSON-serializable: ';
/** SPEC §6: a replay that does not retrace its log fails the run; the detail names the first difference. */
export const REPLAY_DIVERGED_PREFIX = 'code mode replay diverged from the recorded run';
export function replayDivergedMessage(detail: string): string {
  return `${REPLAY_DIVERGED_PREFIX}: ${detail}; start a new run.`;
}
/** An in-flight leg whose thread the watchdog terminated for another run's overrun. */
export const THREAD_LOST_MESSAGE = 'code mode sandbox thread was terminated; the run was lost.';

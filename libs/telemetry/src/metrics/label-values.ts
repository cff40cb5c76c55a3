import { CODE_MODE_ERROR_CODES, FailurePhaseSchema, ToolSourceSchema, type FailurePhase, type ToolSource } from '@codemode/contracts';

/**
 * The closed sets of label values. Every series of these is created at zero when a registry is
 * built, so dashboards and `rate()` see a series before its first event, and nothing outside
 * these sets (ids, free text) can become a label.
 */
export const TOOL_SOURCES: readonly ToolSource[] = ToolSourceSchema.options;

export const TOOL_OUTCOMES = ['ok', 'error'] as const;
export type ToolOutcome = (typeof TOOL_OUTCOMES)[number];

/**
 * `owner`: resumed by the worker holding the parked VM; `image`: restored from its image in Redis
 * elsewhere (SPEC §12); `replay`: rebuilt from the log elsewhere.
 */
export const RESUME_PATHS = ['owner', 'image', 'replay'] as const;
export type ResumePath = (typeof RESUME_PATHS)[number];

/**
 * What recovery did with a run whose worker was gone (SPEC §6, §12): rebuilt it by replay, restored
 * it from its image, ran a first
 * leg that had touched nothing again, recorded it lost, failed it on a divergence from its log,
 * or failed it because recovery itself failed.
 */
export const RECOVERY_OUTCOMES = ['replayed', 'restored', 'rerun', 'lost', 'diverged', 'failed'] as const;
export type RecoveryOutcome = (typeof RECOVERY_OUTCOMES)[number];

/** Queues a worker consumes; `worker` is its own sticky queue, whatever the worker's id. */
export const WORKER_QUEUE_LABELS = ['cells', 'worker', 'shell'] as const;
export type WorkerQueueLabel = (typeof WORKER_QUEUE_LABELS)[number];

/**
 * What this API saw MCP tasks become (SPEC §14 Tasks): `working` when one is created for a call
 * still running, `completed` when it made one already answered or settled a call's answer, `cancelled`.
 */
export const MCP_TASK_STATUSES = ['working', 'completed', 'cancelled'] as const;
export type McpTaskStatusLabel = (typeof MCP_TASK_STATUSES)[number];

/**
 * What an `exec` or `wait` did with a leg that did not answer within its budget plus the grace
 * (libs/events RunOwnership's `UnansweredLegFate`): had it rebuilt, owed its answer to the next
 * wait, recorded it lost, or answered `runtime_unavailable`.
 */
export const UNANSWERED_LEG_FATES = ['rebuild', 'owe', 'lose', 'fail'] as const;
export type UnansweredLegFateLabel = (typeof UNANSWERED_LEG_FATES)[number];

/** The shared queues the API reports on (per-worker queues would put worker ids in labels). */
export const API_QUEUE_LABELS = ['cells', 'shell'] as const;
export type ApiQueueLabel = (typeof API_QUEUE_LABELS)[number];

/** BullMQ job states reported by `codemode_queue_jobs`. */
export const QUEUE_JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;
export type QueueJobState = (typeof QUEUE_JOB_STATES)[number];

export const SANDBOX_THREAD_STATES = ['busy', 'idle', 'starting'] as const;
export const SHELL_SESSION_STATES = ['running', 'finished'] as const;

/**
 * Outcomes of `codemode_shell_notifications_total` (SPEC §7): delivered, failed after its tries
 * (or refused by the address rules), or dropped because too many were in flight.
 */
export const SHELL_NOTIFICATION_OUTCOMES = ['delivered', 'failed', 'dropped'] as const;
export type ShellNotificationOutcome = (typeof SHELL_NOTIFICATION_OUTCOMES)[number];

/** `failed_<code>` for a code outside the contract's list, or a failure without one. */
export const OTHER_FAILURE_OUTCOME = 'failed_other';

export const RUN_OUTCOMES = [
  'completed',
  'waiting',
  ...CODE_MODE_ERROR_CODES.map((code) => `failed_${code}` as const),
  OTHER_FAILURE_OUTCOME,
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

const KNOWN_CODES: ReadonlySet<string> = new Set(CODE_MODE_ERROR_CODES);

/**
 * The `outcome` label of a run's answer: `completed`, `waiting`, or `failed_<code>` with the
 * code from the contract's closed list (anything else is `failed_other`, so a new or
 * misspelled code cannot grow the series count without bound).
 */
export function runOutcomeLabel(result: { status: 'completed' | 'waiting' | 'failed'; code?: string }): RunOutcome {
  if (result.status !== 'failed') return result.status;
  return result.code !== undefined && KNOWN_CODES.has(result.code) ? (`failed_${result.code}` as RunOutcome) : OTHER_FAILURE_OUTCOME;
}

/** `code` of `codemode_runs_failed_total`: the contract's codes, and `other` for anything else. */
export const FAILED_CODES = [...CODE_MODE_ERROR_CODES, 'other'] as const;
export type FailedCode = (typeof FAILED_CODES)[number];

export const FAILURE_PHASES: readonly FailurePhase[] = FailurePhaseSchema.options;

/**
 * The labels of a failed answer (SPEC §19): its code from the closed list and its phase, so the
 * model's own errors (`guest`, `bridge`, `input`) are told from the service's (`host`). A failure
 * without a phase (an answer recorded by an older build) counts as `host`: a bug is not hidden.
 */
export function failedRunLabels(result: { code?: string; failurePhase?: string }): { code: FailedCode; failure_phase: FailurePhase } {
  const code = result.code !== undefined && KNOWN_CODES.has(result.code) ? (result.code as FailedCode) : 'other';
  const phase = FAILURE_PHASES.find((known) => known === result.failurePhase) ?? 'host';
  return { code, failure_phase: phase };
}

import { z } from 'zod';
import { CodeModeResultSchema, type CodeModeResult } from './result';
import { isEndedStatus, type RunView } from './run';
import { decodeEventData } from './event-data';
import type { EventType } from './events';
import { openPlatformCalls, pendingTools } from './platform-wait';

/** SPEC §14 Tasks: how often a client is told to poll, and a `tasks/list` page. */
export const MCP_TASK_POLL_INTERVAL_MS = 1000;
export const MCP_TASKS_PAGE = 50;
/** A task's `ttl` floor (SPEC §14: the session's `snapshotTtlSeconds`, at least 60 s). */
export const MCP_TASK_MIN_TTL_MS = 60_000;
export const WAITING_FOR_PLATFORM = 'waiting for the platform: ';

/** What the task store keeps of a task: which call it is, on which run, and its answer once fixed. */
export const McpTaskRecordSchema = z.object({
  taskId: z.string(),
  /** `exec`: the run's own call; `wait`: a resume of it; `rejected`: an exec refused at input (no run). */
  kind: z.enum(['exec', 'wait', 'rejected']),
  runId: z.string(),
  /** The exec awaits its tool results: a `waiting` run is still this call's work. */
  awaitResults: z.boolean(),
  createdAt: z.number().int(),
  ttlMs: z.number().int(),
  /** The call's answer, once known: fixed at the first time it is known. */
  result: CodeModeResultSchema.nullable(),
  endedAt: z.number().int().nullable(),
  cancelled: z.boolean(),
});
export type McpTaskRecord = z.infer<typeof McpTaskRecordSchema>;

export const execTaskId = (runId: string): string => runId;
export const waitTaskId = (runId: string, n: number): string => `${runId}:w${n}`;
export const rejectedTaskId = (eventId: string): string => `rej-${eventId}`;

/** What a task says now (the MCP `Task` fields this service decides) and, once completed, its answer. */
export type McpTaskState =
  | { status: 'working'; statusMessage?: string }
  | { status: 'completed'; result: CodeModeResult }
  | { status: 'cancelled'; result: CodeModeResult | null };

/**
 * SPEC §14 Tasks: what a task is, from its record and its run as the log has it now (null: the run
 * is gone); `platformWaits` (platformWaitsOf the run's events) is what a running run waits on from the platform. The first answer known is the call's and stays it (`record.result`); before that, an
 * exec's answer is the run's once it ended or, unless it awaits its results, parked (`waiting`
 * answers the exec too); a wait's once the run ended, unless it had ended before the wait
 * (then the wait's own answer, its refusal). A run gone without an answer known is answered as
 * unknown (null): nothing can say what the call answered.
 */
export function mcpTaskState(record: McpTaskRecord, run: RunView | null, platformWaits: readonly string[] = []): McpTaskState | null {
  if (record.cancelled) return { status: 'cancelled', result: record.result };
  if (record.result) return { status: 'completed', result: record.result };
  if (!run) return null;
  const answer = run.lastResult;
  // A wait on a run that had already ended answers that it ended, not the run's result: only its
  // own call knows that answer (settled on the record at once), so the task works until then.
  if (record.kind === 'wait' && run.endedAt !== null && Date.parse(run.endedAt) <= record.createdAt) return { status: 'working' };
  if (answer && isEndedStatus(run.status)) return { status: 'completed', result: answer };
  if (answer && record.kind === 'exec' && !record.awaitResults && run.status === 'waiting') return { status: 'completed', result: answer };
  const waitingOn = platformWaits.length > 0 ? platformWaits.join(', ') : parkedOnPlatform(run);
  return waitingOn ? { status: 'working', statusMessage: `${WAITING_FOR_PLATFORM}${waitingOn}` } : { status: 'working' };
}

/**
 * What a run's events (its own, oldest first) say it waits on from the platform: the tools of its
 * platform calls still open (answered by `tool-results`) and its approvals not yet decided
 * (`approval <id>`), each once.
 */
export function platformWaitsOf(events: readonly { type: EventType; data: unknown }[]): string[] {
  const open = openPlatformCalls(events);
  const waits = new Set<string>();
  const approvals = new Set<string>();
  for (const event of events) {
    if (event.type === 'tool.called') {
      const data = decodeEventData(event.type, event.data);
      if (data && open.has(data.callId)) waits.add(data.tool);
    } else if (event.type === 'approval.requested') {
      const data = decodeEventData(event.type, event.data);
      if (data) approvals.add(data.approvalId);
    } else if (event.type === 'approval.decided') {
      const data = decodeEventData(event.type, event.data);
      if (data) approvals.delete(data.approvalId);
    }
  }
  return [...waits, ...[...approvals].map((id) => `approval ${id}`)];
}

/** A parked run's pending tool calls, by tool name (a wait on it answers once `tool-results` comes); undefined when it lists none. */
function parkedOnPlatform(run: RunView): string | undefined {
  if (run.status !== 'waiting') return undefined;
  const names = pendingTools(run.lastResult).map((call) => call.tool ?? call.method);
  return names.length > 0 ? [...new Set(names)].join(', ') : undefined;
}

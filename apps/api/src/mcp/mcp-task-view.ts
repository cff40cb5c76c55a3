import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { MCP_TASK_POLL_INTERVAL_MS, type McpTaskRecord, type McpTaskState, type RunView } from '@codemode/contracts';

/** A task as MCP's `Task` says it (SPEC §14 Tasks): its state, its ttl, when it last moved. */
export function mcpTaskView(record: McpTaskRecord, state: McpTaskState, run: RunView | null): Task {
  const updated = record.endedAt ?? (run ? Date.parse(run.updatedAt) : NaN);
  return {
    taskId: record.taskId,
    status: state.status,
    ttl: record.ttlMs,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(Number.isFinite(updated) ? updated : record.createdAt).toISOString(),
    pollInterval: MCP_TASK_POLL_INTERVAL_MS,
    ...(state.status === 'working' && state.statusMessage ? { statusMessage: state.statusMessage } : {}),
  };
}

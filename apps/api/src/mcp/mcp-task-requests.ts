import { HttpException, Injectable } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  RELATED_TASK_META_KEY,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import {
  JSON_RPC_INVALID_PARAMS,
  JSON_RPC_SERVER_ERROR,
  JsonRpcRefusal,
  MCP_TASKS_PAGE,
  isEndedStatus,
  mcpTaskState,
  platformWaitsOf,
  mcpToolResult,
  type CodeModeResult,
  type McpTaskRecord,
  type McpTaskState,
  type RunView,
  type SessionRef,
} from '@codemode/contracts';
import { EventLog, McpTaskStore, RunLedger } from '@codemode/events';
import { ApiMetrics } from '@codemode/telemetry';
import { AbortService } from '../runs/abort.service';
import { TenantLimits } from '../quotas/tenant-limits.service';
import { asMcpError, refusedAsMcpError } from './mcp-refusals';
import { McpTaskTermsReader } from './mcp-task-terms';
import { mcpTaskView } from './mcp-task-view';

/** How often a blocked `tasks/result` looks at its task again. */
const RESULT_POLL_MS = 250;

interface TaskNow {
  record: McpTaskRecord;
  state: McpTaskState;
  run: RunView | null;
}

/**
 * SPEC §14 Tasks: `tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list` of one session,
 * answered from the task store and the run as the log has it, so any API replica answers for any
 * task. A task another tenant or session made is an unknown id (its key is in that session's slot).
 */
@Injectable()
export class McpTaskRequests {
  constructor(
    private readonly store: McpTaskStore,
    private readonly runs: RunLedger,
    private readonly events: EventLog,
    private readonly aborts: AbortService,
    private readonly terms: McpTaskTermsReader,
    private readonly metrics: ApiMetrics,
    private readonly limits: TenantLimits,
  ) {}

  /** Answers the four task requests of `server` in `ref`'s session. */
  register(server: Server, ref: SessionRef): void {
    server.setRequestHandler(GetTaskRequestSchema, async (request) => this.get(ref, request.params.taskId));
    server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
      const result = mcpToolResult(await this.result(ref, request.params.taskId, extra.signal));
      return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId: request.params.taskId } } };
    });
    server.setRequestHandler(CancelTaskRequestSchema, async (request) => this.cancel(ref, request.params.taskId));
    server.setRequestHandler(ListTasksRequestSchema, async (request) => this.list(ref, request.params?.cursor));
  }

  async get(ref: SessionRef, taskId: string): Promise<Task> {
    const now = await this.known(ref, taskId);
    return mcpTaskView(now.record, now.state, now.run);
  }

  /**
   * The call's answer once the task is terminal. Until then it blocks, at most one call's answer
   * budget of the session, as a held connection: one of the tenant's stream slots (SPEC §10; past
   * the quota, the quota's refusal), and no in-flight slot.
   */
  async result(ref: SessionRef, taskId: string, signal: AbortSignal): Promise<CodeModeResult> {
    const answered = await this.answerOf(ref, taskId);
    if (answered) return answered;
    const slot = await refusedAsMcpError(this.limits.stream(ref.tenant));
    try {
      const { answerMs } = await this.terms.of(ref);
      const until = Date.now() + answerMs;
      for (;;) {
        if (Date.now() >= until || signal.aborted) {
          throw new JsonRpcRefusal(JSON_RPC_SERVER_ERROR, `task ${taskId} is still working; call tasks/result again.`);
        }
        await sleep(RESULT_POLL_MS, signal);
        const answer = await this.answerOf(ref, taskId);
        if (answer) return answer;
      }
    } finally {
      void slot.release().catch(() => undefined);
    }
  }

  /** A terminal task's answer; null while it works. Whether it is terminal is all this needs: no read of the run's events. */
  private async answerOf(ref: SessionRef, taskId: string): Promise<CodeModeResult | null> {
    const { state } = await this.known(ref, taskId, false);
    if (state.status === 'working') return null;
    if (state.result) return state.result;
    throw new JsonRpcRefusal(JSON_RPC_SERVER_ERROR, `task ${taskId} was cancelled before its run answered.`);
  }

  /** Aborts the task's run as `DELETE …/runs/{runId}` does; a terminal task is refused (-32602). */
  async cancel(ref: SessionRef, taskId: string): Promise<Task> {
    const now = await this.known(ref, taskId);
    if (now.state.status !== 'working' || now.record.kind === 'rejected') throw terminal(now.state.status);
    let aborted;
    try {
      aborted = await this.aborts.abort(ref, now.record.runId);
    } catch (error) {
      // The run ended meanwhile: the task is terminal, as its next read says.
      if (error instanceof HttpException && error.getStatus() === 409) throw terminal('completed');
      throw asMcpError(error);
    }
    if (await this.store.cancel(ref, now.record, aborted)) this.metrics.mcpTasks.inc({ status: 'cancelled' });
    const cancelled = await this.known(ref, taskId);
    return mcpTaskView(cancelled.record, cancelled.state, cancelled.run);
  }

  /** The session's tasks, newest first, `MCP_TASKS_PAGE` a page; the cursor is where the next page starts. */
  async list(ref: SessionRef, cursor: string | undefined): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const offset = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new JsonRpcRefusal(JSON_RPC_INVALID_PARAMS, `invalid cursor ${cursor}.`);
    const page = await this.store.page(ref, offset, MCP_TASKS_PAGE);
    const tasks: Task[] = [];
    for (const record of page.tasks) {
      const now = await this.stateOf(ref, record);
      if (now) tasks.push(mcpTaskView(now.record, now.state, now.run));
    }
    return { tasks, ...(page.next === null ? {} : { nextCursor: String(page.next) }) };
  }

  /** The task as it is now; an unknown id (expired, never made, another session's) is refused (-32602). */
  private async known(ref: SessionRef, taskId: string, withWaits = true): Promise<TaskNow> {
    const record = await this.store.read(ref, taskId);
    const now = record ? await this.stateOf(ref, record, withWaits) : null;
    if (!now) throw new JsonRpcRefusal(JSON_RPC_INVALID_PARAMS, `Failed to retrieve task: Task not found`);
    return now;
  }

  /** Reads the task's run; an answer the run gives for the first time is settled on the task, so it stays the call's. */
  private async stateOf(ref: SessionRef, record: McpTaskRecord, withWaits = true): Promise<TaskNow | null> {
    // An answered or cancelled task is what its record says: no read of its run.
    const settled = record.kind === 'rejected' || record.result !== null || record.cancelled;
    const run = settled ? null : await this.runs.get(ref, record.runId);
    const state = mcpTaskState(record, run, withWaits ? await this.platformWaits(ref, record, run) : []);
    if (!state) return null;
    if (state.status === 'completed' && record.result === null) {
      // Another replica may have settled it first: the stored answer is the task's.
      if (await this.store.settle(ref, record, state.result)) this.metrics.mcpTasks.inc({ status: 'completed' });
      const settled = (await this.store.read(ref, record.taskId)) ?? { ...record, result: state.result };
      return { record: settled, state: mcpTaskState(settled, run) ?? state, run };
    }
    return { record, state, run };
  }

  /** What a live run waits on from the platform, from its events; a run that ended, or a task already answered, needs no read. */
  private async platformWaits(ref: SessionRef, record: McpTaskRecord, run: RunView | null): Promise<string[]> {
    if (!run || isEndedStatus(run.status) || record.result || record.cancelled) return [];
    return platformWaitsOf(await this.events.runEvents(ref, run.runId, Date.parse(run.createdAt)));
  }
}

function terminal(status: string): JsonRpcRefusal {
  return new JsonRpcRefusal(JSON_RPC_INVALID_PARAMS, `Cannot cancel task in terminal status: ${status}`);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

import { Inject, Injectable } from '@nestjs/common';
import type { CreateTaskResult } from '@modelcontextprotocol/sdk/types.js';
import {
  execTaskId,
  JSON_RPC_INVALID_PARAMS,
  JSON_RPC_SERVER_ERROR,
  JsonRpcRefusal,
  rejectedTaskId,
  waitTaskId,
  type CodeModeResult,
  type McpTaskRecord,
  type SessionRef,
} from '@codemode/contracts';
import { emptyTelemetry, failedInputResult } from '@codemode/cells';
import { McpTaskStore, RunLedger } from '@codemode/events';
import { ApiMetrics, type Logger } from '@codemode/telemetry';
import { LOGGER } from '../core/tokens';
import type { ParsedBody } from '../http/request-context';
import { CodeModeCalls } from '../runs/code-mode-calls';
import type { ExecRecorded } from '../runs/exec.service';
import { asMcpError } from './mcp-refusals';
import { McpTaskTermsReader, type McpTaskTerms } from './mcp-task-terms';
import { mcpTaskView } from './mcp-task-view';

/** One task-augmented `tools/call`: who asks, its arguments, its Idempotency-Key, the ttl it asked for. */
export interface McpTaskCall {
  ref: SessionRef;
  body: ParsedBody;
  idempotencyKey: string | undefined;
  ttlMs: number | null | undefined;
}

type Recorded = Parameters<ExecRecorded>[0];

/**
 * SPEC §14 Tasks: `exec` and `wait` called as tasks. The call goes through CodeModeCalls as a
 * plain one does and goes on without the request; the task is answered once the call is recorded
 * (the exec's `run.requested` or refusal; for a wait, its numbered task on a run of the session),
 * and the call's answer, when it comes, is settled on the task. Nothing is kept in this process:
 * a task whose API died before its call answered is answered from its run (mcpTaskState).
 */
@Injectable()
export class McpTaskCalls {
  constructor(
    private readonly calls: CodeModeCalls,
    private readonly runs: RunLedger,
    private readonly store: McpTaskStore,
    private readonly terms: McpTaskTermsReader,
    private readonly metrics: ApiMetrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async exec(call: McpTaskCall): Promise<CreateTaskResult> {
    const terms = await this.terms.of(call.ref, call.ttlMs);
    let recorded: Recorded | undefined;
    let onRecorded: (record: Recorded) => void = () => undefined;
    const whenRecorded = new Promise<Recorded>((resolve) => (onRecorded = resolve));
    const answer = this.calls.exec(call.ref.tenant, call.ref.sessionId, call.body, call.idempotencyKey, 0, (record) => {
      recorded = record;
      onRecorded(record);
    });
    const outcome = answer.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    await Promise.race([whenRecorded, outcome]);
    if (!recorded) {
      // Refused before anything was recorded (a quota, Redis away): answered as the plain call would be.
      const unrecorded = await outcome;
      if ('error' in unrecorded) throw asMcpError(unrecorded.error);
      throw new JsonRpcRefusal(JSON_RPC_SERVER_ERROR, errorOf(unrecorded.result), unrecorded.result);
    }
    if ('rejectedEventId' in recorded) {
      const refusal = await answer;
      const task = { taskId: rejectedTaskId(recorded.rejectedEventId), kind: 'rejected', runId: '', awaitResults: false } as const;
      return (await this.created(call.ref, task, terms, refusal)).answer;
    }
    const task = { taskId: execTaskId(recorded.runId), kind: 'exec', runId: recorded.runId, awaitResults: recorded.awaitResults } as const;
    const created = await this.created(call.ref, task, terms);
    this.settleWhenAnswered(call.ref, created.record, answer);
    return created.answer;
  }

  async wait(call: McpTaskCall): Promise<CreateTaskResult> {
    const runId = runIdOf(call.body);
    const run = runId === undefined ? null : await this.runs.get(call.ref, runId);
    // No run of this session to number the task by: the plain call's refusal.
    if (!run || runId === undefined) {
      await this.calls.wait(call.ref.tenant, call.ref.sessionId, call.body, call.idempotencyKey, 0).catch((error: unknown) => {
        throw asMcpError(error);
      });
      throw new JsonRpcRefusal(JSON_RPC_INVALID_PARAMS, `run ${runId ?? ''} not found in session ${call.ref.sessionId}.`);
    }
    const terms = await this.terms.of(call.ref, call.ttlMs);
    const n = await this.store.nextWaitNumber(call.ref, runId, terms.liveMs + terms.ttlMs);
    const task = { taskId: waitTaskId(runId, n), kind: 'wait', runId, awaitResults: false } as const;
    const created = await this.created(call.ref, task, terms);
    // A wait refused over HTTP (a busy run, a quota) is a completed task with the refusal as a failed answer.
    const answer = this.calls.wait(call.ref.tenant, call.ref.sessionId, call.body, call.idempotencyKey, 0).catch((error: unknown) => {
      const refusal = asMcpError(error);
      if (!(refusal instanceof JsonRpcRefusal)) throw error;
      return failedInputResult(refusal.message, emptyTelemetry(), false);
    });
    this.settleWhenAnswered(call.ref, created.record, answer);
    return created.answer;
  }

  private async created(
    ref: SessionRef,
    task: Pick<McpTaskRecord, 'taskId' | 'kind' | 'runId' | 'awaitResults'>,
    terms: McpTaskTerms,
    result?: CodeModeResult,
  ): Promise<{ record: McpTaskRecord; answer: CreateTaskResult }> {
    const now = Date.now();
    await this.store.create(ref, { ...task, ttlMs: terms.ttlMs, liveMs: terms.liveMs, ...(result ? { result } : {}) }, now);
    const record: McpTaskRecord = {
      ...task,
      createdAt: now,
      ttlMs: terms.ttlMs,
      result: result ?? null,
      endedAt: result ? now : null,
      cancelled: false,
    };
    const state = result ? ({ status: 'completed', result } as const) : ({ status: 'working' } as const);
    this.metrics.mcpTasks.inc({ status: state.status });
    return { record, answer: { task: mcpTaskView(record, state, null) } };
  }

  private settleWhenAnswered(ref: SessionRef, record: McpTaskRecord, answer: Promise<CodeModeResult>): void {
    answer
      .then(async (result) => {
        if (await this.store.settle(ref, record, result)) this.metrics.mcpTasks.inc({ status: 'completed' });
      })
      .catch((error: unknown) =>
        // The task is still answered from its run: what the log has once the run moves on.
        this.logger.warn(
          { tenant: ref.tenant, sessionId: ref.sessionId, taskId: record.taskId, err: error },
          'mcp task answer not settled',
        ),
      );
  }
}

function errorOf(result: CodeModeResult): string {
  return result.status === 'failed' ? result.error : 'exec was not recorded';
}

function runIdOf(body: ParsedBody): string | undefined {
  if (body.kind !== 'json' || typeof body.value !== 'object' || body.value === null) return undefined;
  const runId = (body.value as Record<string, unknown>).runId;
  return typeof runId === 'string' ? runId : undefined;
}

import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { isEndedStatus, openPlatformCalls, type RunView, type SessionRef, type ToolResult } from '@codemode/contracts';
import {
  EventLog,
  NotAwaitingPlatformError,
  recordPlatformAnswers,
  RunAlreadyEndedError,
  RunLedger,
  RunOwnership,
  RunReplies,
  StaleEpochError,
} from '@codemode/events';
import { ConflictApiException, InvalidInputException, NotFoundApiException } from '../http/api-errors';
import { WorkerQueues } from '../queues/worker-queues';
import { BodyThreads } from '../bodies/body-threads';
import { requireObjectBody } from '../http/request-params';
import type { ParsedBody } from '../http/request-context';
import { checkToolResults, type ToolResultsCheck } from './tool-results-body';

const OWNER_ACK_MS = 5000;

/**
 * `POST …/runs/{runId}/tool-results` (SPEC §2, §12): platform answers to pending client tool calls,
 * checked against the run's pending calls and handed to the worker that holds the run; 202 once
 * that worker has recorded them. When the run's owner is gone, or does not take them in time (it
 * may have died before its lease lapsed), they are recorded in the log instead, and whoever
 * resumes the run (restoring its image, or replaying it) applies them. A later `wait` sees them.
 */
@Injectable()
export class ToolResultsService {
  constructor(
    private readonly runs: RunLedger,
    private readonly replies: RunReplies,
    private readonly workers: WorkerQueues,
    private readonly events: EventLog,
    private readonly ownership: RunOwnership,
    private readonly bodies: BodyThreads,
  ) {}

  async submit(ref: SessionRef, runId: string, body: ParsedBody): Promise<{ accepted: number }> {
    const parsed = await this.check(ref.tenant, body);
    if (!parsed.ok) throw new InvalidInputException(parsed.error, parsed.field === undefined ? undefined : { field: parsed.field });
    const run = await this.runs.get(ref, runId);
    if (!run) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    if (isEndedStatus(run.status)) {
      throw new ConflictApiException('run has already ended.', { status: run.status });
    }
    const pending = await this.pendingOf(ref, run);
    const unknown = parsed.results.map((r) => r.id).filter((id) => !pending.has(id));
    if (unknown.length > 0) {
      throw new InvalidInputException(
        `unknown tool call id ${unknown[0]}; answer only the pendingToolCalls of the run's last waiting result.`,
        {
          field: 'results.id',
          pending: [...pending],
        },
      );
    }
    if (parsed.results.length === 0) return { accepted: 0 };
    if (await this.ownership.ownerGone(run)) return this.recordInLog(ref, run, parsed.results);
    const owner = run.owner ?? '';
    const requestId = randomUUID();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), OWNER_ACK_MS);
    let jobId: string | undefined;
    try {
      const ack = this.replies.waitForAnswer(requestId, controller.signal);
      jobId = await this.workers.toolResults(owner, {
        tenant: ref.tenant,
        sessionId: ref.sessionId,
        runId,
        results: parsed.results,
        requestId,
        replyTo: this.replies.channelFor(ref),
      });
      const answer = (await ack) as { accepted?: number; error?: string };
      if (answer.error !== undefined) throw new ConflictApiException(answer.error);
      return { accepted: answer.accepted ?? parsed.results.length };
    } catch (error) {
      if (!controller.signal.aborted) throw error;
      // Its owner never took them (it may be dead with its lease not lapsed yet): taken back, they go to the log.
      if (jobId !== undefined && (await this.workers.withdraw(owner, jobId))) return this.recordInLog(ref, run, parsed.results);
      throw new ConflictApiException('the worker holding the run did not take the results; retry, or wait on the run.');
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A run no live worker holds (released, evicted, or its owner dead): its next wait restores it
   * from its image or rebuilds it by replay and takes these answers from the log, so they are
   * recorded there, each checked against the log to be an unsettled call only the platform answers
   * (as the owner would check it).
   */
  /**
   * The calls the platform may answer: the pending calls of the run's last waiting result, and for
   * a running run the platform calls its log leaves open (SPEC §15: an awaitResults run's
   * `agents.run` calls wait in flight, and the platform learns them from their `tool.called`).
   */
  private async pendingOf(ref: SessionRef, run: RunView): Promise<Set<string>> {
    const pending = new Set(run.lastResult?.status === 'waiting' ? (run.lastResult.pendingToolCalls ?? []).map((c) => c.id) : []);
    if (run.status !== 'running') return pending;
    for (const id of openPlatformCalls(await this.events.runEvents(ref, run.runId, Date.parse(run.createdAt)))) pending.add(id);
    return pending;
  }

  /** SPEC §10 "Event loops": a large body is parsed and checked on a body thread. */
  private async check(tenant: string, body: ParsedBody): Promise<ToolResultsCheck> {
    if (body.kind !== 'large') return checkToolResults(requireObjectBody(body));
    // A body that kills its thread (out of memory) is not one this API can read.
    const read = await this.bodies
      .run(tenant, { kind: 'tool-results', bytes: body.bytes })
      .catch(() => ({ kind: 'invalid_json' }) as const);
    // Unreadable: requireObjectBody answers it as it answers a small body that is.
    return read.kind === 'checked' ? read.check : checkToolResults(requireObjectBody(read));
  }

  private async recordInLog(ref: SessionRef, run: RunView, results: ToolResult[]): Promise<{ accepted: number }> {
    try {
      await recordPlatformAnswers(this.events, ref, run, results);
    } catch (error) {
      if (error instanceof NotAwaitingPlatformError) throw new ConflictApiException(error.message, { id: error.callId });
      if (error instanceof RunAlreadyEndedError) throw new ConflictApiException('run has already ended.', { status: error.status });
      if (error instanceof StaleEpochError) throw new ConflictApiException('the run moved to another worker meanwhile; retry.');
      throw error;
    }
    return { accepted: results.length };
  }
}

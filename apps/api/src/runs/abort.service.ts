import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { isEndedStatus, type CodeModeResult, type SessionRef } from '@codemode/contracts';
import { RunAlreadyEndedError, RunEnds, RunLedger, RunReplies } from '@codemode/events';
import { ABORTED_MESSAGE, emptyTelemetry } from '@codemode/cells';
import type { Logger } from '@codemode/telemetry';
import { ConflictApiException, NotFoundApiException } from '../http/api-errors';
import { WorkerQueues } from '../queues/worker-queues';
import { LOGGER } from '../core/tokens';

/** How long the owner gets to discard the parked cell before the API ends the run itself. */
const OWNER_ABORT_MS = 3000;

/** `DELETE /v1/sessions/{sid}/runs/{runId}` (SPEC §3): aborted, pending calls cancelled, nothing committed. */
@Injectable()
export class AbortService {
  constructor(
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly replies: RunReplies,
    private readonly workers: WorkerQueues,
    private readonly ends: RunEnds,
  ) {}

  /**
   * A run an exec or wait is executing: its owner ends the leg `aborted` (at once while the cell
   * waits on host work; a cell busy in guest code stops at its next interrupt check or deadline),
   * records it, and answers the exec/wait; this answers the DELETE with the run's final result.
   */
  private async abortExecuting(ref: SessionRef, runId: string): Promise<CodeModeResult> {
    const run = await this.runs.get(ref, runId);
    if (!run?.owner) throw new ConflictApiException('run has no owner yet; retry the abort.', { status: run?.status ?? null });
    await this.workers.abort(run.owner, { tenant: ref.tenant, sessionId: ref.sessionId, runId, replyTo: this.replies.channelFor(ref) });
    const until = Date.now() + ABORT_EXECUTING_MS;
    while (Date.now() < until) {
      const now = await this.runs.get(ref, runId);
      if (now && isEndedStatus(now.status) && now.lastResult) {
        if (now.lastResult.status === 'failed' && now.lastResult.code === 'aborted') return now.lastResult;
        throw alreadyEnded(now.status, now.lastResult);
      }
      if (now?.status === 'waiting') return this.abort(ref, runId);
      await sleep(ABORT_POLL_MS);
    }
    throw new ConflictApiException('the run did not stop in time; check GET …/runs/{runId}.', { status: 'running' });
  }

  async abort(ref: SessionRef, runId: string): Promise<CodeModeResult> {
    const run = await this.runs.get(ref, runId);
    if (!run) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    const result = abortedResult(run.restartSafe);
    if (isEndedStatus(run.status)) throw alreadyEnded(run.status, run.lastResult);
    if (run.status === 'requested') {
      const outcome = await this.ends.abandon(ref, runId, result);
      if (outcome.abandoned) return result;
      return this.abortExecuting(ref, runId);
    }
    if (run.status === 'running') return this.abortExecuting(ref, runId);
    // Parked: reserve it like a wait, so no resume can start while the owner discards it.
    const reservation = await this.runs.reserveResume(ref, runId, randomUUID(), OWNER_ABORT_MS * 2);
    if (!reservation.reserved) {
      if (reservation.busy) return this.abortExecuting(ref, runId);
      return this.abort(ref, runId);
    }
    // A released run (handed over for replay) is in no worker's memory: nobody to tell.
    if (reservation.owner === '') return this.endHere(ref, runId, reservation.epoch, result);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), OWNER_ABORT_MS);
    try {
      const reply = this.replies.waitFor(runId, { signal: controller.signal });
      await this.workers.abort(reservation.owner, {
        tenant: ref.tenant,
        sessionId: ref.sessionId,
        runId,
        replyTo: this.replies.channelFor(ref),
      });
      return await reply;
    } catch {
      // The owner did not answer (gone, or Redis lost the push): end the run here; its VM, if
      // the owner still has one, is dropped when the owner next touches the run.
      this.logger.warn(
        { tenant: ref.tenant, sessionId: ref.sessionId, runId },
        'owner did not take the abort; ending the run from the API',
      );
      return this.endHere(ref, runId, reservation.epoch, result);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends a parked run from the API (no worker holds it, or its owner did not answer). */
  private async endHere(ref: SessionRef, runId: string, epoch: number, result: CodeModeResult): Promise<CodeModeResult> {
    try {
      // What the parked run held goes now, not at its expiry: its quota place and its image.
      await this.ends.finish({ ref, runId, epoch, holdsParkedQuota: true, imaged: true }, result);
      return result;
    } catch (error) {
      if (!(error instanceof RunAlreadyEndedError)) throw error;
      const now = await this.runs.get(ref, runId);
      if (now?.lastResult?.status === 'failed' && now.lastResult.code === 'aborted') return now.lastResult;
      throw alreadyEnded(now?.status ?? 'failed', now?.lastResult ?? null);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function abortedResult(replaySafe: boolean): CodeModeResult {
  return {
    status: 'failed',
    error: ABORTED_MESSAGE,
    code: 'aborted',
    failurePhase: 'host',
    bridgeDispatchStarted: false,
    replaySafe,
    telemetry: emptyTelemetry(),
  };
}

/** How often the API looks whether an executing run has ended after its abort was sent. */
const ABORT_POLL_MS = 25;
/** The longest an abort of an executing run waits: the largest budget plus a margin. */
const ABORT_EXECUTING_MS = 65_000;

function alreadyEnded(status: string, lastResult: CodeModeResult | null): ConflictApiException {
  return new ConflictApiException('run has already ended.', { status, result: lastResult });
}

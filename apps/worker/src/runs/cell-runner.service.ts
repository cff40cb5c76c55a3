import { Inject, Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  isEndedStatus,
  type CellJob,
  type CodeModeResult,
  type RunRecoverySeed,
  type RunStatus,
  type SessionRef,
} from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { resultReply, retryWhileStoreUnavailable, RunLedger, RunNotStartedError, type RedisClient } from '@codemode/events';
import { failedOutcome, replayDivergedMessage, type CellOutcome } from '@codemode/cells';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER, REDIS } from '../core/tokens';
import { ClaimGate, claimWithinMs, type ClaimAnswer } from './claim-gate';
import { LegRunner, type Leg } from './leg-runner.service';
import { ResidentRuns } from './resident-runs.service';
import { RunOutcomes } from './run-outcomes.service';
import { RunningLegs } from './running-legs.service';
import type { RunToolHost } from '../tools/run-tool-host';
import { ToolHosts } from '../tools/tool-hosts.service';
import type { EntryAck } from './entry-ack';
import { WorkerRun } from './worker-run';

/** The epoch a run's first owner holds it with; every takeover adds one (fencing). */
export const FIRST_EPOCH = 1;

/** Runs one queued cell: claim it in the ledger, run it in the sandbox, record and push its answer. */
@Injectable()
export class CellRunner {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly runs: RunLedger,
    private readonly resident: ResidentRuns,
    private readonly legs: LegRunner,
    private readonly outcomes: RunOutcomes,
    private readonly toolHosts: ToolHosts,
    private readonly running: RunningLegs,
  ) {}

  /**
   * Claims and runs a new cell: a `restartSafe` one claimed before it starts, any other as it runs
   * (ClaimGate). Answers the run's status when it was not `requested` any more (abandoned by the
   * API, or already started: a job re-delivered after its worker stalled).
   * `entryAck`: a stream entry's acknowledgement, sent beside the run's first recorded outcome.
   */
  async run(job: CellJob, entryAck?: EntryAck): Promise<{ started: true } | { started: false; status: string | null }> {
    const ref = { tenant: job.tenant, sessionId: job.sessionId };
    const log = this.logger.child({ tenant: job.tenant, sessionId: job.sessionId, runId: job.runId });
    // Reads only: read again while Redis does not answer, within the cell's budget, as a claim is
    // sent again, so a run claimed once Redis is back finds its tools read too.
    const hosting = retryWhileStoreUnavailable(() => this.toolHosts.create(ref, job.runId, FIRST_EPOCH, job.spec), {
      giveUpMs: job.spec.limits.timeoutMs,
    });
    let host: RunToolHost;
    let recovery: RunRecoverySeed | undefined;
    let claimGate: ClaimGate | undefined;
    if (job.spec.restartSafe) {
      // Its run.started records the hash of the catalog it runs with: claimed once that is known.
      host = await hosting;
      recovery = newRecoverySeed(host.guestCatalogHash());
      const claim = await this.claim(ref, job, recovery);
      if (!claim.started) return this.notStarted(ref, job, log, claim.status);
    } else {
      // SPEC §13: started before its claim is written (ClaimGate), claimed by its first request,
      // at 100 ms, or by its end; one that could not be prepared is claimed to fail. Its run's
      // status is read with its tools: a cell starts only for a run still `requested` (an entry
      // of a run not recorded yet, or never, runs nothing; one already started goes to recovery).
      const [status, hosted] = await Promise.all([
        retryWhileStoreUnavailable(() => this.runs.status(ref, job.runId), { giveUpMs: job.spec.limits.timeoutMs }),
        hosting.then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        ),
      ]);
      if (status !== 'requested') return this.notStarted(ref, job, log, status);
      if ('error' in hosted) return this.failUnprepared(ref, job, hosted.error, log);
      host = hosted.value;
      claimGate = new ClaimGate(
        () => this.claim(ref, job, undefined),
        () => void this.resident.discardVm(job.runId),
        claimWithinMs(job.spec.limits.timeoutMs),
      );
      host.gateRequests(claimGate);
    }
    const run = new WorkerRun(ref, job.runId, FIRST_EPOCH, job.spec, host, { entryAck, claimGate });
    claimGate?.arm();
    try {
      await this.execute(run, { kind: 'first', seed: recovery?.seed }, job.replyTo, log);
    } catch (error) {
      if (!(error instanceof RunNotStartedError)) throw error;
      return this.notStarted(ref, job, log, error.status);
    }
    return { started: true };
  }

  /**
   * The cell does not run here: its run is not `requested` any more. One that ended (abandoned:
   * an abort, or no start within its budget) has its caller told the end recorded for it now,
   * rather than at its start budget (the abort's script cannot know where that caller waits;
   * this job does). Best effort: the caller's deadline still answers it.
   */
  private async notStarted(ref: SessionRef, job: CellJob, log: Logger, status: RunStatus | null): Promise<ClaimAnswer> {
    log.info({ status }, 'cell not started: run is no longer waiting for a worker');
    if (status === null || !isEndedStatus(status)) return { started: false, status };
    try {
      const run = await this.runs.get(ref, job.runId);
      if (run?.lastResult) {
        const reply = resultReply(job.replyTo, job.runId, run.lastResult);
        await this.redis.spublish(reply.channel, reply.message);
      }
    } catch (error) {
      log.warn({ err: error }, 'could not tell the caller of a run ended before it started here how it ended; its deadline will');
    }
    return { started: false, status };
  }

  /** A new cell whose tools or policy could not be read: claimed, it fails without running. */
  private async failUnprepared(ref: SessionRef, job: CellJob, cause: unknown, log: Logger): Promise<ClaimAnswer> {
    const claim = await this.claim(ref, job, undefined);
    if (!claim.started) return this.notStarted(ref, job, log, claim.status);
    log.error({ err: cause }, "could not read the session's tools or policy; the claimed run fails");
    await this.outcomes.failUnprepared({ ref, runId: job.runId, epoch: FIRST_EPOCH, restartSafe: false }, job.replyTo, cause);
    return claim;
  }

  /**
   * Only a `requested` run becomes this worker's (SPEC §6): the first epoch's claim. A claim whose
   * reply was lost may have landed: it is sent again with its token while Redis does not answer,
   * within the cell's budget (past it the API has abandoned the run), so a landed claim is never
   * left `running` with no cell. A replay-safe run's leg is indexed beside its claim (RunningLegs).
   */
  private claim(ref: SessionRef, job: CellJob, recovery: RunRecoverySeed | undefined): ReturnType<RunLedger['start']> {
    const opts = { workerId: this.config.workerId, epoch: FIRST_EPOCH, replyTo: job.replyTo, recovery, claimToken: randomUUID() };
    const { restartSafe, limits } = job.spec;
    return this.running.beside(
      { ref, runId: job.runId, restartSafe, timeoutMs: limits.timeoutMs },
      job.replyTo,
      () => retryWhileStoreUnavailable(() => this.runs.start(ref, job.runId, opts), { giveUpMs: limits.timeoutMs }),
      (claim) => claim.started,
    );
  }

  /** Runs a leg of a run that starts on this worker (a new cell, or one taken over: rerun, replay, restore), then records and answers it. */
  async execute(run: WorkerRun, leg: Leg, replyTo: string, log: Logger): Promise<CodeModeResult> {
    const started = Date.now();
    this.resident.begin(run);
    const result = await this.legs.run(run, leg, replyTo, log, started);
    log.info(
      {
        status: result.status,
        ...(result.status === 'failed' ? { code: result.code, failurePhase: result.failurePhase } : {}),
        durationMs: Date.now() - started,
      },
      'cell answered',
    );
    return result;
  }
}

/** SPEC §6: a run whose log cannot be replayed fails, naming why; it is never guessed. */
export function divergedOutcome(detail: string): CellOutcome {
  return failedOutcome({ code: 'internal_error', phase: 'host', error: replayDivergedMessage(detail) }, { bridgeDispatchStarted: true });
}

/** A restartSafe run's random seed and the hash of the catalog it runs with (SPEC §6, `SessionToolCatalog.guestCatalogHash`). */
export function newRecoverySeed(catalogHash: string): RunRecoverySeed {
  const words = randomBytes(16);
  return { seed: [0, 1, 2, 3].map((i) => words.readUInt32LE(i * 4)), catalogHash };
}

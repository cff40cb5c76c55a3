import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import {
  KeySpace,
  LiveRunIndex,
  RunEnds,
  RunLedger,
  RunOwnership,
  strandedRunFate,
  unheardReplyChannel,
  type DueRun,
} from '@codemode/events';
import { hostFailureResult, NOT_STARTED_MESSAGE } from '@codemode/cells';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { RunRecovery } from '../recovery/run-recovery.service';
import { RunIndexSweeper } from './run-index-sweeper';

/** Runs looked at per sweep; the rest wait for the next one. */
const SWEEP_BATCH = 200;

/**
 * SPEC §2, no run left without its terminal event: ends the runs an exec or a wait set going
 * that are still `requested` or `running` a lease past their answer's deadline with nobody left to
 * end them (the API that asked died or could not close it, Redis refused the end, the worker no
 * longer holds it: strandedRunFate decides), and rebuilds by replay the replay-safe ones whose
 * worker is gone (SPEC §16). Every worker sweeps once per lease; each end is
 * fenced (a `requested` run only, or the epoch it was seen at), so two sweepers, or a sweeper and
 * the run's own worker, cannot both end a run.
 */
@Injectable()
export class LiveRunSweeper extends RunIndexSweeper {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    private readonly index: LiveRunIndex,
    private readonly runs: RunLedger,
    private readonly ownership: RunOwnership,
    private readonly ends: RunEnds,
    private readonly metrics: WorkerMetrics,
    private readonly recovery: RunRecovery,
    private readonly keys: KeySpace,
  ) {
    super(config, logger, index, { name: 'live-run', batch: SWEEP_BATCH });
  }

  protected async settle(due: DueRun, now: number): Promise<boolean> {
    const { ref, runId } = due;
    const run = await this.runs.get(ref, runId);
    const fate = strandedRunFate(
      run?.status ?? null,
      run?.status === 'running' && (await this.ownership.ownerGone(run)),
      run?.restartSafe ?? false,
    );
    const fields = { tenant: ref.tenant, sessionId: ref.sessionId, runId, owner: run?.owner ?? null };
    if (fate === 'replay') {
      // Its caller was answered `waiting` or is gone with its API: the leg's answer goes to the
      // next wait. Rebuilt here (RunRecovery takes it over, fenced by owner and epoch), in the
      // background: the leg runs as long as it runs.
      await this.runs.oweAnswer(ref, runId);
      this.logger.warn(
        fields,
        'rebuilding by replay a replay-safe run still running a lease past its deadline under a worker that is gone',
      );
      void this.recovery
        .replay({ ...ref, runId, replyTo: unheardReplyChannel(this.keys, ref), requestedAt: now })
        .catch((error: unknown) => this.logger.error({ ...fields, err: error }, 'could not rebuild a stranded replay-safe run'));
    }
    if (fate === 'postpone' || fate === 'replay') {
      // Looked at again after a lease: a rebuilt leg whose new worker dies too is rebuilt again.
      await this.index.postpone(ref, runId, now + this.config.presenceTtlMs);
      return false;
    }
    let ended = false;
    if (run && fate === 'abandon') {
      const result = hostFailureResult(NOT_STARTED_MESSAGE, 'runtime_unavailable', run.restartSafe);
      ended = (await this.ends.abandon(ref, runId, result)).abandoned;
      if (ended) {
        this.metrics.strandedRunsEnded.inc({ outcome: 'abandoned' });
        this.logger.warn(
          fields,
          'ended a run still requested a lease past its deadline: no worker started it and its API did not close it',
        );
      }
    } else if (run && fate === 'lose') {
      ended = await this.ends.lose({ ref, runId, epoch: run.epoch });
      if (ended) {
        this.metrics.strandedRunsEnded.inc({ outcome: 'lost' });
        this.logger.warn(
          fields,
          'ended a run still running a lease past its deadline under a worker that no longer holds it; recorded as lost',
        );
      }
    }
    // Ended, forgotten, or moved on meanwhile (whoever moved it is responsible for it). A failed write throws: next sweep.
    await this.index.remove(ref, runId);
    return ended;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { ParkedRunExpiry, ParkedRunIndex, RunEnds, RunLedger, RunOwnership, type DueRun } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { RunIndexSweeper } from './run-index-sweeper';

/** Runs looked at per sweep; the rest wait for the next one. */
const SWEEP_BATCH = 100;

/**
 * Asks ParkedRunExpiry about the parked runs the index says are due, so that one whose holder is
 * gone (released for replay, or parked on a worker that died) is ended too; a live holder's own
 * timer ends its runs, and the sweep looks again after a lease in case it dies first. Every worker
 * sweeps once per lease; the expiry write is fenced by the run's epoch, so two sweepers, or a
 * sweeper and a wait, cannot both end a run.
 */
@Injectable()
export class ParkedRunSweeper extends RunIndexSweeper {
  private readonly expiry: ParkedRunExpiry;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    private readonly index: ParkedRunIndex,
    private readonly runs: RunLedger,
    ownership: RunOwnership,
    ends: RunEnds,
  ) {
    super(config, logger, index, { name: 'parked-run', batch: SWEEP_BATCH });
    this.expiry = new ParkedRunExpiry(ends, ownership);
  }

  protected async settle(due: DueRun, now: number): Promise<boolean> {
    const { ref, runId } = due;
    const run = await this.runs.get(ref, runId);
    if (!run || run.status !== 'waiting') {
      await this.index.remove(ref, runId);
      return false;
    }
    const expiresAt = run.expiresAt ? Date.parse(run.expiresAt) : due.dueAt;
    // A failed write throws: next sweep. Not ended: someone ended or took it over meanwhile.
    const { step, ended } = await this.expiry.settle({ ref, runId, epoch: run.epoch, owner: run.owner, expiresAt }, 'sweep', now);
    if (step === 'not-due') {
      await this.index.postpone(ref, runId, expiresAt);
      return false;
    }
    if (step === 'left-to-holder') {
      await this.index.postpone(ref, runId, now + this.config.presenceTtlMs);
      return false;
    }
    if (ended)
      this.logger.info({ tenant: ref.tenant, sessionId: ref.sessionId, runId, owner: run.owner }, 'expired a parked run nobody holds');
    await this.index.remove(ref, runId);
    return ended;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { ParkedRunIndex, RunEnds, RunLedger, RunOwnership, type DueRun } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { RunIndexSweeper } from './run-index-sweeper';

/** Runs looked at per sweep; the rest wait for the next one. */
const SWEEP_BATCH = 100;

/**
 * Ends parked runs that outlived `snapshotTtlSeconds` with nobody holding them: released for
 * replay, or parked on a worker that died (RunOwnership decides). (A live holder expires its own runs.) Every worker
 * sweeps once per lease; the expiry write is fenced by the run's epoch, so two sweepers, or a
 * sweeper and a wait, cannot both end a run.
 */
@Injectable()
export class ParkedRunSweeper extends RunIndexSweeper {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    private readonly index: ParkedRunIndex,
    private readonly runs: RunLedger,
    private readonly ownership: RunOwnership,
    private readonly ends: RunEnds,
  ) {
    super(config, logger, index, { name: 'parked-run', batch: SWEEP_BATCH });
  }

  protected async settle(due: DueRun, now: number): Promise<boolean> {
    const { ref, runId } = due;
    const run = await this.runs.get(ref, runId);
    if (!run || run.status !== 'waiting') {
      await this.index.remove(ref, runId);
      return false;
    }
    const expiresAt = run.expiresAt ? Date.parse(run.expiresAt) : due.dueAt;
    if (expiresAt > now) {
      await this.index.postpone(ref, runId, expiresAt);
      return false;
    }
    if (!(await this.ownership.ownerGone(run))) {
      // Its holder expires it; looked at again after a lease, in case the holder dies first.
      await this.index.postpone(ref, runId, now + this.config.presenceTtlMs);
      return false;
    }
    // Not ended: someone ended or took it over meanwhile. A failed write throws: next sweep.
    const ended = await this.ends.expire({ ref, runId, epoch: run.epoch });
    if (ended)
      this.logger.info({ tenant: ref.tenant, sessionId: ref.sessionId, runId, owner: run.owner }, 'expired a parked run nobody holds');
    await this.index.remove(ref, runId);
    return ended;
  }
}

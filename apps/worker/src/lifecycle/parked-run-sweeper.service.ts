import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { ParkedRunIndex, RunLedger, RunOwnership, type DueParkedRun } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/** Runs looked at per sweep; the rest wait for the next one. */
const SWEEP_BATCH = 100;

/**
 * Ends parked runs that outlived `snapshotTtlSeconds` with nobody holding them: released for
 * replay, or parked on a worker that died (RunOwnership decides). (A live holder expires its own runs.) Every worker
 * sweeps once per lease; the expiry write is fenced by the run's epoch, so two sweepers, or a
 * sweeper and a wait, cannot both end a run.
 */
@Injectable()
export class ParkedRunSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly index: ParkedRunIndex,
    private readonly runs: RunLedger,
    private readonly ownership: RunOwnership,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.config.presenceTtlMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** One sweep; answers how many runs it ended. */
  async sweep(now = Date.now()): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      let ended = 0;
      for (const due of await this.index.due(now, SWEEP_BATCH)) {
        if (await this.settle(due, now)) ended += 1;
      }
      return ended;
    } catch (error) {
      this.logger.warn({ err: error }, 'parked-run sweep failed; retrying at the next one');
      return 0;
    } finally {
      this.sweeping = false;
    }
  }

  private async settle(due: DueParkedRun, now: number): Promise<boolean> {
    const { ref, runId } = due;
    const run = await this.runs.get(ref, runId);
    if (!run || run.status !== 'waiting') {
      await this.index.remove(ref, runId);
      return false;
    }
    const expiresAt = run.expiresAt ? Date.parse(run.expiresAt) : due.expiresAt;
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
    const ended = await this.ownership.expire(ref, runId, run.epoch);
    if (ended)
      this.logger.info({ tenant: ref.tenant, sessionId: ref.sessionId, runId, owner: run.owner }, 'expired a parked run nobody holds');
    await this.index.remove(ref, runId);
    return ended;
  }
}

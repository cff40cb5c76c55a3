import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { RUN_END_REASONS } from '@codemode/contracts';
import { ParkedRunIndex, RunLedger, WorkerPresence, type DueParkedRun } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { RunOutcomes } from '../runs/run-outcomes.service';

/** Runs looked at per sweep; the rest wait for the next one. */
const SWEEP_BATCH = 100;

/**
 * Ends parked runs that outlived `snapshotTtlSeconds` with nobody holding them: released for
 * replay, or parked on a worker that died. (A live holder expires its own runs.) Every worker
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
    private readonly presence: WorkerPresence,
    private readonly outcomes: RunOutcomes,
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
    const held =
      run.owner === this.config.workerId
        ? this.outcomes.parked.get(runId) !== undefined
        : !!run.owner && (await this.presence.isAlive(run.owner));
    if (held) {
      // Its holder expires it; looked at again after a lease, in case the holder dies first.
      await this.index.postpone(ref, runId, now + this.config.presenceTtlMs);
      return false;
    }
    // Not ended: someone ended or took it over meanwhile. A failed write throws: next sweep.
    const ended = await this.runs.endOrphaned(ref, runId, { type: 'run.expired', epoch: run.epoch, reason: RUN_END_REASONS.expired });
    if (ended)
      this.logger.info({ tenant: ref.tenant, sessionId: ref.sessionId, runId, owner: run.owner }, 'expired a parked run nobody holds');
    await this.index.remove(ref, runId);
    return ended;
  }
}

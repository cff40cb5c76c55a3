import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { lapsedLegFate, RunLedger, RunningLegIndex, RunOwnership, type RunningLeg } from '@codemode/events';
import { WorkerPresence } from '@codemode/fleet';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { RunRecovery } from '../recovery/run-recovery.service';

/** Silent workers looked at per pass, the most recently seen first. */
const OWNERS_PER_PASS = 16;
/** Legs of one lapsed owner taken per pass; the rest at the next. */
const LEGS_PER_OWNER = 64;
/**
 * How long after its last beat a silent worker's legs are still looked for, in leases, while the
 * registry still lists it (the queue janitor drops it a few leases after its lapse); a leg left
 * past either is the live-run sweep's.
 */
const LOOKBACK_LEASES = 10;

/**
 * SPEC §17 "rebuilt at once, caller or not": every worker looks, twice per lease, at the workers
 * whose lease has just lapsed (the worker registry: last seen more than a lease ago, lease gone),
 * reads each one's running `restartSafe` legs (RunningLegIndex) and has each rebuilt by replay now
 * (RunRecovery, the one rebuild path), without waiting for a caller or the live-run sweep.
 * RunOwnership decides (lapsed, lapsedLegFate); the takeover is fenced by owner and epoch, so two
 * workers that notice at once rebuild a leg once. Bounded reads: one registry range, then per
 * lapsed owner one EXISTS and one HSCAN, and a run read per leg.
 */
@Injectable()
export class LapsedOwnerRebuilds implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private passing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly presence: WorkerPresence,
    private readonly index: RunningLegIndex,
    private readonly runs: RunLedger,
    private readonly ownership: RunOwnership,
    private readonly recovery: RunRecovery,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.pass(), Math.max(250, Math.floor(this.config.presenceTtlMs / 2)));
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** One pass; answers how many legs it had rebuilt. */
  async pass(now = Date.now()): Promise<number> {
    if (this.passing) return 0;
    this.passing = true;
    try {
      const lease = this.config.presenceTtlMs;
      let rebuilt = 0;
      for (const owner of await this.presence.silentBetween(now - LOOKBACK_LEASES * lease, now - lease, OWNERS_PER_PASS)) {
        if (!(await this.ownership.lapsed(owner))) continue;
        for (const leg of await this.index.legsOf(owner, LEGS_PER_OWNER)) {
          if (await this.settle(owner, leg, now)) rebuilt += 1;
        }
      }
      return rebuilt;
    } catch (error) {
      this.logger.warn({ err: error }, 'could not look for the legs of lapsed workers; looking again at the next pass');
      return 0;
    } finally {
      this.passing = false;
    }
  }

  /** Rebuilds one leg of a lapsed owner, or forgets an entry whose run moved on; true when it had it rebuilt. */
  private async settle(owner: string, leg: RunningLeg, now: number): Promise<boolean> {
    const { ref, runId } = leg;
    const fate = lapsedLegFate(await this.runs.get(ref, runId), owner, leg.answeredBy, now);
    if (fate !== 'forget') {
      const fields = { tenant: ref.tenant, sessionId: ref.sessionId, runId, owner, owed: fate === 'rebuild-owed' };
      // Its caller has answered or is gone: the rebuilt leg's answer goes to the next wait (SPEC §16).
      if (fate === 'rebuild-owed') await this.runs.oweAnswer(ref, runId);
      this.logger.warn(fields, 'rebuilding by replay a replay-safe leg whose worker’s lease lapsed');
      // In the background: the leg runs as long as it runs. Its answer goes to the caller it was answering.
      void this.recovery
        .replay({ ...ref, runId, replyTo: leg.replyTo, requestedAt: now })
        .catch((error: unknown) => this.logger.error({ ...fields, err: error }, 'could not rebuild a replay-safe leg of a lapsed worker'));
    }
    // Taken over (the taker indexes it as its own), forgotten, or moved on. A failed removal throws: next pass.
    await this.index.remove(owner, ref, runId);
    return fate !== 'forget';
  }
}

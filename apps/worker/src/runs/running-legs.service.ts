import { Inject, Injectable } from '@nestjs/common';
import type { SessionRef } from '@codemode/contracts';
import { LIMIT_RULES, type AppConfig } from '@codemode/config';
import { RunningLegIndex } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/** A run whose leg this worker is about to take or has run; `timeoutMs` unknown (a takeover, before its log is read): the longest a leg may be given. */
export interface IndexedRun {
  ref: SessionRef;
  runId: string;
  restartSafe: boolean;
  timeoutMs?: number;
}

/**
 * This worker's entries in the index of running `restartSafe` legs by owner (RunningLegIndex,
 * SPEC §17): the worker that finds this one's lease lapsed rebuilds them at once (LapsedOwnerRebuilds).
 * Other runs are not indexed: nothing rebuilds them.
 */
@Injectable()
export class RunningLegs {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly index: RunningLegIndex,
  ) {}

  /**
   * Runs `take` (the script that makes the leg this worker's: a claim, a resume, a takeover) with
   * the leg's entry sent ahead of it on the same connection, not awaited first: a crash between
   * the two leaves an entry for a run not taken, which its reader drops, and on a Redis Cluster
   * (two slots, two nodes) a lost entry leaves a running leg the live-run sweep still finds. An
   * entry for a leg `taken` says was not taken is removed.
   */
  async beside<T>(run: IndexedRun, replyTo: string, take: () => Promise<T>, taken: (answer: T) => boolean): Promise<T> {
    if (!run.restartSafe) return take();
    const timeoutMs = run.timeoutMs ?? LIMIT_RULES.timeoutMs.max;
    // When its caller has answered or given up: as the API's live-run entry counts it.
    const answeredBy = Date.now() + timeoutMs + this.config.replyGraceMs + this.config.presenceTtlMs;
    const indexed = this.index
      .add(this.config.workerId, { ref: run.ref, runId: run.runId, replyTo, answeredBy })
      .catch((error: unknown) => this.logger.warn({ runId: run.runId, err: error }, 'could not index the running replay-safe leg'));
    let answer: T;
    try {
      answer = await take();
    } catch (error) {
      await indexed;
      this.ended(run);
      throw error;
    }
    await indexed;
    if (!taken(answer)) this.ended(run);
    return answer;
  }

  /** The leg parked or ended here (or was never taken): best effort, an entry left behind is dropped by its reader. */
  ended(run: IndexedRun): void {
    if (!run.restartSafe) return;
    this.index.remove(this.config.workerId, run.ref, run.runId).catch(() => undefined);
  }
}

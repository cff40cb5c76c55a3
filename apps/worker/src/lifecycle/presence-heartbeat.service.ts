import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { WorkerPresence } from '@codemode/fleet';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { ResidentRuns } from '../runs/resident-runs.service';

/**
 * Keeps this worker's lease (renewed from the main thread every TTL/4, never from a thread
 * running guest code), so work is routed to it only while it can take it. A lease found lapsed
 * (Redis unreachable or the process stalled for longer than the TTL) means another worker may
 * have taken its runs over: before taking a new lease it keeps only the parked runs nobody
 * touched meanwhile, and drops the rest without writing.
 */
@Injectable()
export class PresenceHeartbeat implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private held = false;
  /** The lease lapsed and the parked runs have not been checked since (retried each beat). */
  private reconcilePending = false;
  /** The beat in flight, if any (`stop` waits for it, so no beat renews the lease after it). */
  private beating: Promise<void> | undefined;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly presence: WorkerPresence,
    private readonly residentRuns: ResidentRuns,
    private readonly metrics: WorkerMetrics,
  ) {}

  onApplicationBootstrap(): void {
    const beat = (): void => {
      if (this.beating || this.stopped) return;
      this.beating = this.beat()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'could not renew the worker lease'))
        .finally(() => {
          this.beating = undefined;
        });
    };
    beat();
    this.timer = setInterval(beat, Math.max(250, Math.floor(this.config.presenceTtlMs / 4)));
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** Whether this worker holds its lease (and so is in the worker registry): readiness needs it. */
  get holdsLease(): boolean {
    return this.held && !this.stopped;
  }

  /** Stops beating and gives the lease up: nothing is routed to this worker any more. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.beating;
    await this.presence.leave(this.config.workerId).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    const { workerId, presenceTtlMs } = this.config;
    if (this.held && !(await this.presence.renew(workerId, presenceTtlMs))) {
      this.logger.error({ workerId }, 'worker lease lapsed; checking which parked runs are still this worker’s');
      this.metrics.leaseLapsesTotal.inc();
      this.reconcilePending = true;
    }
    if (!this.held || this.reconcilePending) {
      await this.presence.beat(workerId, presenceTtlMs);
      this.held = true;
    }
    if (this.reconcilePending) {
      // After the lease is ours again, so no takeover can slip in between the check and it.
      const { kept, dropped } = await this.residentRuns.reconcile();
      this.reconcilePending = false;
      this.logger.warn({ workerId, kept, dropped }, 'parked runs reconciled after the lease lapsed');
    }
  }
}

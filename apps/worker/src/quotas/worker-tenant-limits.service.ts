import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { SessionRef } from '@codemode/contracts';
import { quotasFor, type AppConfig, type TenantQuotas } from '@codemode/config';
import { SlotLeases, TenantQuotaLedger, type LeasedSlot, type ParkedAdmission } from '@codemode/fleet';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { WorkerTenancy } from '../core/worker-tenancy.service';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/** What a parking cell fails with past its tenant's parked-run quota (SPEC §10). */
export const PARKED_RUNS_QUOTA_ERROR = 'code mode parked-run quota reached for this tenant; wait on or abort a parked run first.';
export const parkedBytesQuotaError = (maxBytes: number): string =>
  `code mode parked-run bytes quota reached for this tenant (${maxBytes} bytes of parked runs); wait on or abort a parked run first.`;

/**
 * The worker's side of SPEC §10 quotas, fleet-wide through Redis: running shell sessions and
 * parked runs (count and bytes) of each tenant, in the worker's tenancy mode.
 */
@Injectable()
export class WorkerTenantLimits implements OnApplicationShutdown {
  private readonly leases: SlotLeases;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly ledger: TenantQuotaLedger,
    private readonly tenancy: WorkerTenancy,
    private readonly metrics: WorkerMetrics,
  ) {
    this.leases = new SlotLeases(
      ledger,
      (error) => this.logger.warn({ err: error }, 'could not renew quota leases; retrying'),
      config.tenancySettings.quotaLeaseMs,
    );
  }

  onApplicationShutdown(): void {
    this.leases.close();
  }

  quotas(tenant: string): TenantQuotas {
    return quotasFor(this.config.tenancySettings, tenant, this.tenancy.mode);
  }

  /** A running-shell-session slot, or null when the tenant runs its quota already. */
  async shellSession(tenant: string): Promise<LeasedSlot | null> {
    const max = this.quotas(tenant).maxShellProcesses;
    if (!Number.isFinite(max)) return { count: 0, release: () => Promise.resolve() };
    const slot = await this.leases.take(tenant, 'shell', max);
    if (!slot) this.refused(tenant, 'shell_processes');
    return slot;
  }

  /** How many REST shell calls of the tenant may be in flight on this worker (SPEC §10: per worker, not fleet-wide). */
  shellCallMax(tenant: string): number {
    return this.quotas(tenant).maxShellCalls;
  }

  /** A shell call refused at `shellCallMax`, counted and logged as every quota refusal. */
  shellCallRefused(tenant: string): void {
    this.refused(tenant, 'shell_calls');
  }

  /** Counts a parking run against its tenant's parked runs and bytes. */
  async admitParked(ref: SessionRef, runId: string, expiresAt: number, bytes: number): Promise<ParkedAdmission> {
    const { maxParkedRuns, maxParkedBytes } = this.quotas(ref.tenant);
    const admission = await this.ledger.admitParked(
      ref.tenant,
      runId,
      { expiresAt, bytes, now: Date.now() },
      { runs: maxParkedRuns, bytes: maxParkedBytes },
    );
    if (!admission.admitted) this.refused(ref.tenant, admission.limit === 'runs' ? 'parked_runs' : 'parked_bytes');
    return admission;
  }

  /** The message a refused parking cell fails with. */
  parkedRefusal(tenant: string, admission: Exclude<ParkedAdmission, { admitted: true }>): string {
    return admission.limit === 'runs' ? PARKED_RUNS_QUOTA_ERROR : parkedBytesQuotaError(this.quotas(tenant).maxParkedBytes);
  }

  /**
   * SPEC §10 "Parked memory": a parked run whose VM left this worker's memory counts its image's
   * size from now on. Awaited before the run is released, so no other worker can have parked it
   * again (counting its VM) in between.
   */
  async recountParked(ref: SessionRef, runId: string, bytes: number): Promise<void> {
    await this.ledger
      .recountParked(ref.tenant, runId, bytes)
      .catch((error: unknown) => this.logger.warn({ runId, err: error }, 'could not recount a parked run; it counts its VM until it ends'));
  }

  /** Best effort: a place nobody gives back stops counting at the run's expiry anyway. */
  freeParked(ref: SessionRef, runId: string): void {
    this.ledger
      .freeParked(ref.tenant, runId)
      .catch((error: unknown) => this.logger.warn({ runId, err: error }, 'could not free a parked-run quota place'));
  }

  private refused(tenant: string, limit: 'shell_processes' | 'shell_calls' | 'parked_runs' | 'parked_bytes'): void {
    this.metrics.tenantLimitedOnce(limit, tenant);
    this.logger.info({ tenant, limit }, 'refused at a tenant quota');
  }
}

import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { TenancyRecord, type TenancyMode } from '@codemode/fleet';
import { APP_CONFIG } from './tokens';

/** How often the worker reads the deployment's tenancy mode again. */
const MODE_REFRESH_MS = 5000;

/**
 * The tenancy mode this worker acts in (SPEC §10 "Mode"): `CODEMODE_TENANCY` when set, else the
 * mode the API recorded in Redis (read at start and every few seconds), and `multi` until one has
 * been read. The one owner of that rule on the worker side; shell confinement, webhook address
 * rules and quotas all ask it.
 */
@Injectable()
export class WorkerTenancy implements OnModuleInit, OnApplicationShutdown {
  private recorded: TenancyMode | null = null;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(mode: TenancyMode) => void>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly record: TenancyRecord,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), MODE_REFRESH_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  get mode(): TenancyMode {
    return this.config.tenancy ?? this.recorded ?? 'multi';
  }

  /**
   * SPEC §10: what one tenant may hold of `total` places of this worker: half in multi-tenant mode
   * (its in-memory parked slots, its released waiting cells), all of them in single mode.
   */
  tenantShare(total: number): number {
    return this.mode === 'multi' ? Math.floor(total / 2) : total;
  }

  /** Called with the new mode whenever it changes. */
  onChange(listener: (mode: TenancyMode) => void): void {
    this.listeners.add(listener);
  }

  private async refresh(): Promise<void> {
    if (this.config.tenancy) return;
    const before = this.mode;
    // A record that expired or could not be read leaves the last mode read in force.
    this.recorded = (await this.record.read().catch(() => null)) ?? this.recorded;
    if (this.mode !== before) for (const listener of this.listeners) listener(this.mode);
  }
}

import { DynamicModule, Global, Module } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import type { Logger } from '@codemode/telemetry';
import { CellsModule } from './cells/cells.module';
import { CoreModule } from './core/core.module';
import { APP_CONFIG, LOGGER } from './core/tokens';
import { FleetModule } from './fleet/fleet.module';
import { HealthModule } from './health/health.module';
import { LifecycleModule } from './lifecycle/lifecycle.module';
import { MetricsModule } from './metrics/metrics.module';
import { QuotasModule } from './quotas/quotas.module';
import { OwnQueueModule } from './own-queue/own-queue.module';

@Global()
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: WorkerModule,
      imports: [CoreModule, QuotasModule, CellsModule, OwnQueueModule, HealthModule, MetricsModule, LifecycleModule, FleetModule],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
      ],
      exports: [APP_CONFIG, LOGGER],
    };
  }
}

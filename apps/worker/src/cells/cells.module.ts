import { Module } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { CellStream, KeySpace, type RedisClient } from '@codemode/events';
import { WorkerPresence } from '@codemode/fleet';
import { DEFAULT_MAX_PARKED, SandboxPool } from '@codemode/sandbox';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER, REDIS } from '../core/tokens';
import { WorkerTenancy } from '../core/worker-tenancy.service';
import { RecoveryModule } from '../recovery/recovery.module';
import { RunsModule } from '../runs/runs.module';
import { CellStreamReaders } from './cell-stream-readers';
import { CellWork } from './cell-work';
import { CellsProcessor } from './cells.processor';
import { IdleLegs } from './idle-legs';

@Module({
  imports: [RunsModule, RecoveryModule],
  providers: [
    {
      provide: IdleLegs,
      inject: [SandboxPool, WorkerTenancy],
      // SPEC §10: a tenant's released waiting cells are bounded like its parked VMs (half of a
      // worker's 64 places in multi-tenant mode).
      useFactory: (pool: SandboxPool, tenancy: WorkerTenancy) =>
        new IdleLegs({ waitsOnHost: (runId) => pool.waitsOnHost(runId), tenantCap: () => tenancy.tenantShare(DEFAULT_MAX_PARKED) }),
    },
    CellWork,
    CellsProcessor,
    {
      provide: CellStreamReaders,
      inject: [APP_CONFIG, LOGGER, REDIS, KeySpace, WorkerPresence, CellWork, WorkerMetrics],
      // Their own budget of `cellConcurrency` beside the BullMQ consumer's, which then serves replays only.
      useFactory: (
        c: AppConfig,
        logger: Logger,
        redis: RedisClient,
        keys: KeySpace,
        presence: WorkerPresence,
        cells: CellWork,
        metrics: WorkerMetrics,
      ) =>
        new CellStreamReaders({
          enabled: c.redis.cellDispatch === 'stream',
          stream: new CellStream(redis, keys, c.redis.queueShards),
          redis,
          presence,
          cells,
          workerId: c.workerId,
          budget: c.cellConcurrency,
          presenceTtlMs: c.presenceTtlMs,
          logger,
          onTaken: (enqueuedAt) => metrics.jobClaimed('cells', enqueuedAt),
        }),
    },
  ],
  exports: [CellsProcessor, CellStreamReaders],
})
export class CellsModule {}

import { Module } from '@nestjs/common';
import { DEFAULT_MAX_PARKED, SandboxPool } from '@codemode/sandbox';
import { WorkerTenancy } from '../core/worker-tenancy.service';
import { RecoveryModule } from '../recovery/recovery.module';
import { RunsModule } from '../runs/runs.module';
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
    CellsProcessor,
  ],
  exports: [CellsProcessor],
})
export class CellsModule {}

import { Module } from '@nestjs/common';
import { RecoveryModule } from '../recovery/recovery.module';
import { RunsModule } from '../runs/runs.module';
import { CellsProcessor } from './cells.processor';

@Module({ imports: [RunsModule, RecoveryModule], providers: [CellsProcessor], exports: [CellsProcessor] })
export class CellsModule {}

import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { CellsProcessor } from './cells.processor';

@Module({ imports: [RunsModule], providers: [CellsProcessor], exports: [CellsProcessor] })
export class CellsModule {}

import { Module } from '@nestjs/common';
import { CellRunner } from './cell-runner.service';
import { CellsProcessor } from './cells.processor';

@Module({ providers: [CellRunner, CellsProcessor], exports: [CellsProcessor] })
export class CellsModule {}

import { Module } from '@nestjs/common';
import { CellsModule } from '../cells/cells.module';
import { HealthController } from './health.controller';

@Module({ imports: [CellsModule], controllers: [HealthController] })
export class HealthModule {}

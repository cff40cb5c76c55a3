import { Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { MetricsModule } from './metrics.module';

/** `/metrics` on the public port: imported in single mode only (SPEC §10; multi mode uses MetricsPort). */
@Module({ imports: [MetricsModule], controllers: [MetricsController] })
export class PublicMetricsModule {}

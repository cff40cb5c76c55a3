import { Module } from '@nestjs/common';
import { ShellModule } from '../shell/shell.module';
import { ToolsModule } from '../tools/tools.module';
import { MetricsController } from './metrics.controller';
import { WorkerGauges } from './worker-gauges.service';

/** `GET /metrics` of the worker; the registry itself is provided by CoreModule to every consumer. */
@Module({ imports: [ShellModule, ToolsModule], controllers: [MetricsController], providers: [WorkerGauges] })
export class MetricsModule {}

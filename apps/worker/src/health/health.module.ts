import { Module } from '@nestjs/common';
import { CellsModule } from '../cells/cells.module';
import { OwnQueueModule } from '../own-queue/own-queue.module';
import { LifecycleModule } from '../lifecycle/lifecycle.module';
import { ShellModule } from '../shell/shell.module';
import { ToolsModule } from '../tools/tools.module';
import { HealthController } from './health.controller';

@Module({ imports: [CellsModule, OwnQueueModule, ShellModule, ToolsModule, LifecycleModule], controllers: [HealthController] })
export class HealthModule {}

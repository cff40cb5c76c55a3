import { Module } from '@nestjs/common';
import { CellsModule } from '../cells/cells.module';
import { ResumesModule } from '../resumes/resumes.module';
import { LifecycleModule } from '../lifecycle/lifecycle.module';
import { ShellModule } from '../shell/shell.module';
import { ToolsModule } from '../tools/tools.module';
import { HealthController } from './health.controller';

@Module({ imports: [CellsModule, ResumesModule, ShellModule, ToolsModule, LifecycleModule], controllers: [HealthController] })
export class HealthModule {}

import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { ToolsModule } from '../tools/tools.module';
import { ReplayRunner } from './replay-runner.service';

@Module({ imports: [RunsModule, ToolsModule], providers: [ReplayRunner], exports: [ReplayRunner] })
export class RecoveryModule {}

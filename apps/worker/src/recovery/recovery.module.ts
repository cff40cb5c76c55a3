import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { ToolsModule } from '../tools/tools.module';
import { RunRecovery } from './run-recovery.service';
import { RunRestore } from './run-restore.service';

@Module({ imports: [RunsModule, ToolsModule], providers: [RunRecovery, RunRestore], exports: [RunRecovery] })
export class RecoveryModule {}

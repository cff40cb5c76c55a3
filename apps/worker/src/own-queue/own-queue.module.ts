import { Module } from '@nestjs/common';
import { RecoveryModule } from '../recovery/recovery.module';
import { RunsModule } from '../runs/runs.module';
import { ShellModule } from '../shell/shell.module';
import { OwnQueueProcessor } from './own-queue.processor';

@Module({ imports: [RunsModule, RecoveryModule, ShellModule], providers: [OwnQueueProcessor], exports: [OwnQueueProcessor] })
export class OwnQueueModule {}

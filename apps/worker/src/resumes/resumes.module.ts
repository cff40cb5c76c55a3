import { Module } from '@nestjs/common';
import { RecoveryModule } from '../recovery/recovery.module';
import { RunsModule } from '../runs/runs.module';
import { ShellModule } from '../shell/shell.module';
import { ResumesProcessor } from './resumes.processor';

@Module({ imports: [RunsModule, RecoveryModule, ShellModule], providers: [ResumesProcessor], exports: [ResumesProcessor] })
export class ResumesModule {}

import { Module } from '@nestjs/common';
import { CellsModule } from '../cells/cells.module';
import { ResumesModule } from '../resumes/resumes.module';
import { RunsModule } from '../runs/runs.module';
import { WorkerShutdown } from './worker-shutdown.service';

@Module({ imports: [CellsModule, ResumesModule, RunsModule], providers: [WorkerShutdown] })
export class LifecycleModule {}

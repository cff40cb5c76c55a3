import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { ResumesProcessor } from './resumes.processor';

@Module({ imports: [RunsModule], providers: [ResumesProcessor], exports: [ResumesProcessor] })
export class ResumesModule {}

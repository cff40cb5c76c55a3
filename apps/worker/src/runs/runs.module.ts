import { Module } from '@nestjs/common';
import { ToolsModule } from '../tools/tools.module';
import { CellRunner } from './cell-runner.service';
import { ResumeRunner } from './resume-runner.service';
import { RunOutcomes } from './run-outcomes.service';

@Module({ imports: [ToolsModule], providers: [RunOutcomes, CellRunner, ResumeRunner], exports: [RunOutcomes, CellRunner, ResumeRunner] })
export class RunsModule {}

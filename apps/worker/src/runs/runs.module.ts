import { Module } from '@nestjs/common';
import { CellRunner } from './cell-runner.service';
import { ResumeRunner } from './resume-runner.service';
import { RunOutcomes } from './run-outcomes.service';

@Module({ providers: [RunOutcomes, CellRunner, ResumeRunner], exports: [RunOutcomes, CellRunner, ResumeRunner] })
export class RunsModule {}

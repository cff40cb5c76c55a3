import { Module } from '@nestjs/common';
import { AbortService } from './abort.service';
import { ExecService } from './exec.service';
import { ToolResultsService } from './tool-results.service';
import { RunsController } from './runs.controller';
import { WaitService } from './wait.service';

@Module({ controllers: [RunsController], providers: [ExecService, WaitService, AbortService, ToolResultsService] })
export class RunsModule {}

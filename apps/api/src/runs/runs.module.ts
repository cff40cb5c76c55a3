import { Module } from '@nestjs/common';
import { ExecService } from './exec.service';
import { RunsController } from './runs.controller';
import { WaitService } from './wait.service';

@Module({ controllers: [RunsController], providers: [ExecService, WaitService] })
export class RunsModule {}

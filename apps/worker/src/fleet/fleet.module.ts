import { Module } from '@nestjs/common';
import { WorkerReporter } from './worker-report.service';

/** The worker's part of the operator console's fleet view. */
@Module({
  providers: [WorkerReporter],
})
export class FleetModule {}

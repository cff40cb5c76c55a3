import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller';
import { FleetController } from './fleet.controller';
import { FleetService } from './fleet.service';

/** The operator console: its page at `/console` and the fleet view it reads. */
@Module({
  controllers: [ConsoleController, FleetController],
  providers: [FleetService],
})
export class ConsoleModule {}

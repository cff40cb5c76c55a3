import { Controller, Get } from '@nestjs/common';
import type { FleetView } from '@codemode/contracts';
import { Tenant } from '../http/request-params';
import { FleetService } from './fleet.service';

/** `GET /v1/fleet`: live workers, the cell queue, and the caller's own live runs per worker. */
@Controller('v1/fleet')
export class FleetController {
  constructor(private readonly fleet: FleetService) {}

  @Get()
  view(@Tenant() tenant: string): Promise<FleetView> {
    return this.fleet.view(tenant);
  }
}

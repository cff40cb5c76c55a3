import { All, Controller, Req, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { ApiRequest } from '../http/request-context';
import { Tenant } from '../http/request-params';
import { McpEndpoint } from './mcp-endpoint.service';

/** `/mcp` (SPEC §14): POST for requests, GET for the notification stream, DELETE to end a session. */
@Controller('mcp')
export class McpController {
  constructor(private readonly endpoint: McpEndpoint) {}

  @All()
  handle(@Tenant() tenant: string, @Req() req: ApiRequest, @Res() res: ServerResponse): Promise<void> {
    return this.endpoint.handle(req, res, tenant);
  }
}

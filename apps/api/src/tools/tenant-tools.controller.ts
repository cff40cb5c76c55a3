import { Controller, Delete, Get, Param, Put, Req, StreamableFile, UseInterceptors } from '@nestjs/common';
import type { TenantToolView } from '@codemode/contracts';
import { jsonReply } from '../http/json-reply';
import { JsonBody, requireOperator, Tenant } from '../http/request-params';
import type { ApiRequest, ParsedBody } from '../http/request-context';
import { StoredBytesInterceptor } from '../quotas/stored-bytes.interceptor';
import { TenantToolsService } from './tenant-tools.service';

/** `PUT`/`GET`/`DELETE /v1/tools` (SPEC §18): the tenant's tools; writes need an operator key. */
@Controller('v1/tools')
export class TenantToolsController {
  constructor(private readonly tools: TenantToolsService) {}

  @Get()
  async list(@Tenant() tenant: string): Promise<StreamableFile> {
    return jsonReply(await this.tools.list(tenant));
  }

  @Put(':name')
  @UseInterceptors(StoredBytesInterceptor)
  put(
    @Tenant() tenant: string,
    @Req() req: ApiRequest,
    @Param('name') name: string,
    @JsonBody() body: ParsedBody,
  ): Promise<TenantToolView> {
    requireOperator(req, "change the tenant's tools");
    return this.tools.put(tenant, name, body);
  }

  @Delete(':name')
  remove(@Tenant() tenant: string, @Req() req: ApiRequest, @Param('name') name: string): Promise<{ name: string; deleted: true }> {
    requireOperator(req, "change the tenant's tools");
    return this.tools.delete(tenant, name);
  }
}

import { Controller, Get, Put, Req } from '@nestjs/common';
import type { Policy } from '@codemode/contracts';
import { JsonBody, requireObjectBody, requireOperator, Tenant } from '../http/request-params';
import type { ApiRequest, ParsedBody } from '../http/request-context';
import { PolicyService } from './policy.service';

/** `GET`/`PUT /v1/policy` (SPEC §11): the tenant-wide tool policy. */
@Controller('v1/policy')
export class PolicyController {
  constructor(private readonly policies: PolicyService) {}

  @Get()
  get(@Tenant() tenant: string): Promise<Policy> {
    return this.policies.tenant(tenant);
  }

  @Put()
  put(@Tenant() tenant: string, @Req() req: ApiRequest, @JsonBody() body: ParsedBody): Promise<Policy> {
    requireOperator(req, 'change the tool policy');
    return this.policies.putTenant(tenant, requireObjectBody(body));
  }
}

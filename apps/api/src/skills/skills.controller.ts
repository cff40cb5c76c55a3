import { Controller, Delete, Get, Param, Put, Req, UseInterceptors } from '@nestjs/common';
import type { SessionRef, Skill, SkillSummary } from '@codemode/contracts';
import { JsonBody, requireOperator, Session, Tenant } from '../http/request-params';
import type { ApiRequest, ParsedBody } from '../http/request-context';
import { StoredBytesInterceptor } from '../quotas/stored-bytes.interceptor';
import { SkillsService } from './skills.service';

/** `PUT`/`GET`/`DELETE /v1/skills` (SPEC §15): the tenant's skills; writes need an operator key. */
@Controller('v1/skills')
export class TenantSkillsController {
  constructor(private readonly skills: SkillsService) {}

  @Get()
  list(@Tenant() tenant: string): Promise<{ skills: SkillSummary[] }> {
    return this.skills.listTenant(tenant);
  }

  @Put(':name')
  put(@Tenant() tenant: string, @Req() req: ApiRequest, @Param('name') name: string, @JsonBody() body: ParsedBody): Promise<Skill> {
    requireOperator(req, "change the tenant's skills");
    return this.skills.putTenant(tenant, name, body);
  }

  @Delete(':name')
  remove(@Tenant() tenant: string, @Req() req: ApiRequest, @Param('name') name: string): Promise<{ name: string; deleted: true }> {
    requireOperator(req, "change the tenant's skills");
    return this.skills.deleteTenant(tenant, name);
  }
}

/** `PUT /v1/sessions/{sid}/skills` (SPEC §15): replaces the session's skills. */
@Controller('v1/sessions/:sid/skills')
export class SessionSkillsController {
  constructor(private readonly skills: SkillsService) {}

  @Put()
  @UseInterceptors(StoredBytesInterceptor)
  put(@Session() ref: SessionRef, @JsonBody() body: ParsedBody): Promise<{ skills: SkillSummary[] }> {
    return this.skills.putSession(ref, body);
  }
}

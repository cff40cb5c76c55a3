import { Controller, Get, Query } from '@nestjs/common';
import type { RunList, SessionList, SessionRef } from '@codemode/contracts';
import { Session, Tenant } from '../http/request-params';
import { parseListPageQuery } from './list-page-query';
import { SessionListing } from './session-listing.service';

/** `GET /v1/sessions`: the caller's tenant's sessions, newest activity first. */
@Controller('v1/sessions')
export class SessionListController {
  constructor(private readonly listing: SessionListing) {}

  @Get()
  list(@Tenant() tenant: string, @Query() query: Record<string, unknown>): Promise<SessionList> {
    return this.listing.sessionsOf(tenant, parseListPageQuery(query));
  }
}

/** `GET /v1/sessions/{sid}/runs`: the session's runs, newest request first. */
@Controller('v1/sessions/:sid/runs')
export class RunListController {
  constructor(private readonly listing: SessionListing) {}

  @Get()
  list(@Session() ref: SessionRef, @Query() query: Record<string, unknown>): Promise<RunList> {
    return this.listing.runsOf(ref, parseListPageQuery(query));
  }
}

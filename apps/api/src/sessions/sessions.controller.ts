import { Controller, Delete, Get, HttpCode, Put, Req, UseInterceptors } from '@nestjs/common';
import type { SessionConfig, SessionDeleted, SessionRef, SessionView, TranscriptEntry } from '@codemode/contracts';
import { JsonBody, requireObjectBody, requireOperator, Session } from '../http/request-params';
import type { ApiRequest, ParsedBody } from '../http/request-context';
import { parseSessionPolicy, PolicyService } from '../policy/policy.service';
import { StoredBytesInterceptor } from '../quotas/stored-bytes.interceptor';
import { SessionDeletion } from './session-deletion.service';
import { SessionsService } from './sessions.service';

@Controller('v1/sessions/:sid')
export class SessionsController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly policies: PolicyService,
    private readonly deletion: SessionDeletion,
  ) {}

  /** The session's `policy` (SPEC §11; null removes it) is checked first and stored once the session is. */
  @Put()
  @UseInterceptors(StoredBytesInterceptor)
  async configure(@Session() ref: SessionRef, @Req() req: ApiRequest, @JsonBody() body: ParsedBody): Promise<SessionConfig> {
    const input = body.kind === 'empty' ? {} : requireObjectBody(body);
    if (input.policy !== undefined) requireOperator(req, "change the session's tool policy");
    const policy = input.policy === undefined ? undefined : parseSessionPolicy(input.policy);
    const config = await this.sessions.configure(ref, input);
    return { ...config, policy: policy === undefined ? await this.policies.session(ref) : await this.policies.putSession(ref, policy) };
  }

  @Get()
  async get(@Session() ref: SessionRef): Promise<SessionView> {
    const view = await this.sessions.get(ref);
    return { ...view, policy: await this.policies.session(ref) };
  }

  /** SPEC §10: the session and everything of it go (its live runs aborted first); space comes back to the tenant. */
  @Delete()
  @HttpCode(200)
  delete(@Session() ref: SessionRef): Promise<SessionDeleted> {
    return this.deletion.delete(ref);
  }

  @Get('transcript')
  transcript(@Session() ref: SessionRef): Promise<{ entries: TranscriptEntry[] }> {
    return this.sessions.transcript(ref);
  }
}

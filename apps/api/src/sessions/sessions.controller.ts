import { Controller, Get, Put } from '@nestjs/common';
import type { SessionConfig, SessionRef, SessionView, TranscriptEntry } from '@codemode/contracts';
import { JsonBody, requireObjectBody, Session } from '../core/request-params';
import type { ParsedBody } from '../core/request-context';
import { SessionsService } from './sessions.service';

@Controller('v1/sessions/:sid')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Put()
  configure(@Session() ref: SessionRef, @JsonBody() body: ParsedBody): Promise<SessionConfig> {
    return this.sessions.configure(ref, body.kind === 'empty' ? {} : requireObjectBody(body));
  }

  @Get()
  get(@Session() ref: SessionRef): Promise<SessionView> {
    return this.sessions.get(ref);
  }

  @Get('transcript')
  transcript(@Session() ref: SessionRef): Promise<{ entries: TranscriptEntry[] }> {
    return this.sessions.transcript(ref);
  }
}

import { Controller, Get, Put, StreamableFile, UseInterceptors } from '@nestjs/common';
import type { SessionRef, ToolsView } from '@codemode/contracts';
import type { KeyRole } from '@codemode/config';
import { jsonReply } from '../core/json-reply';
import { JsonBody, Role, Session } from '../core/request-params';
import type { ParsedBody } from '../core/request-context';
import { StoredBytesInterceptor } from '../quotas/stored-bytes.interceptor';
import { ToolsService, type ToolsAnswer } from './tools.service';

@Controller('v1/sessions/:sid/tools')
export class ToolsController {
  constructor(private readonly tools: ToolsService) {}

  @Put()
  @UseInterceptors(StoredBytesInterceptor)
  async put(@Session() ref: SessionRef, @Role() role: KeyRole, @JsonBody() body: ParsedBody): Promise<ToolsView | StreamableFile> {
    return reply(await this.tools.put(ref, role, body));
  }

  @Get()
  async get(@Session() ref: SessionRef): Promise<ToolsView | StreamableFile> {
    return reply(await this.tools.view(ref));
  }
}

function reply(answer: ToolsAnswer): ToolsView | StreamableFile {
  return answer instanceof Uint8Array ? jsonReply(answer) : answer;
}

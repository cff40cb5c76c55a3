import { Controller, Get, Put } from '@nestjs/common';
import type { SessionRef, ToolsView } from '@codemode/contracts';
import { JsonBody, requireObjectBody, Session } from '../core/request-params';
import type { ParsedBody } from '../core/request-context';
import { ToolsService } from './tools.service';

@Controller('v1/sessions/:sid/tools')
export class ToolsController {
  constructor(private readonly tools: ToolsService) {}

  @Put()
  put(@Session() ref: SessionRef, @JsonBody() body: ParsedBody): Promise<ToolsView> {
    return this.tools.put(ref, requireObjectBody(body));
  }

  @Get()
  get(@Session() ref: SessionRef): Promise<ToolsView> {
    return this.tools.view(ref);
  }
}

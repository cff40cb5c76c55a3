import { Controller, Get, Put, Query, StreamableFile, UseInterceptors } from '@nestjs/common';
import {
  codeModeTools,
  TOOL_DEFINITION_FORMATS,
  toolDefinitions,
  type SessionRef,
  type ToolDefinitionFormat,
  type ToolDefinitions,
  type ToolsView,
} from '@codemode/contracts';
import type { KeyRole } from '@codemode/config';
import { InvalidInputException } from '../http/api-errors';
import { jsonReply } from '../http/json-reply';
import { JsonBody, Role, Session } from '../http/request-params';
import type { ParsedBody } from '../http/request-context';
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

  /** SPEC §14: exec and wait as a model API takes them; a never-written session gets the defaults and nothing is created. */
  @Get('definitions')
  async definitions(
    @Session() ref: SessionRef,
    @Query('format') format: unknown,
  ): Promise<{ tools: ToolDefinitions[ToolDefinitionFormat][] }> {
    if (!isFormat(format)) throw new InvalidInputException(FORMAT_ERROR, { field: 'format' });
    return { tools: toolDefinitions(format, codeModeTools(await this.tools.execDescription(ref))) };
  }
}

export const FORMAT_ERROR = `format must be one of ${TOOL_DEFINITION_FORMATS.join(', ')}.`;

function isFormat(value: unknown): value is ToolDefinitionFormat {
  return typeof value === 'string' && (TOOL_DEFINITION_FORMATS as readonly string[]).includes(value);
}

function reply(answer: ToolsAnswer): ToolsView | StreamableFile {
  return answer instanceof Uint8Array ? jsonReply(answer) : answer;
}

import { Controller, Delete, Get, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import { RUN_ID_PATTERN, type CodeModeResult, type RunView, type SessionRef } from '@codemode/contracts';
import { RunLedger } from '@codemode/events';
import { NotFoundApiException } from '../http/api-errors';
import { JsonBody, Session } from '../http/request-params';
import type { ParsedBody } from '../http/request-context';
import { StoredBytesInterceptor } from '../quotas/stored-bytes.interceptor';
import { AbortService } from './abort.service';
import { ToolResultsService } from './tool-results.service';

/** A session's runs: abort, tool results, view. REST `exec` and `wait` are `codeModeRoute`'s. */
@Controller('v1/sessions/:sid')
export class RunsController {
  constructor(
    private readonly abortService: AbortService,
    private readonly toolResults: ToolResultsService,
    private readonly runs: RunLedger,
  ) {}

  @Delete('runs/:runId')
  @HttpCode(200)
  abort(@Session() ref: SessionRef, @Param('runId') runId: string): Promise<CodeModeResult> {
    if (!RUN_ID_PATTERN.test(runId)) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    return this.abortService.abort(ref, runId);
  }

  @Post('runs/:runId/tool-results')
  @HttpCode(202)
  @UseInterceptors(StoredBytesInterceptor)
  submitToolResults(
    @Session() ref: SessionRef,
    @Param('runId') runId: string,
    @JsonBody() body: ParsedBody,
  ): Promise<{ accepted: number }> {
    if (!RUN_ID_PATTERN.test(runId)) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    return this.toolResults.submit(ref, runId, body);
  }

  @Get('runs/:runId')
  async get(@Session() ref: SessionRef, @Param('runId') runId: string): Promise<RunView> {
    const run = RUN_ID_PATTERN.test(runId) ? await this.runs.get(ref, runId) : null;
    if (!run) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    return run;
  }
}

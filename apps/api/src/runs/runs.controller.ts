import { Controller, Delete, Get, Headers, HttpCode, Param, Post, Res, UseInterceptors } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { RUN_ID_PATTERN, type CodeModeResult, type RunView, type SessionRef } from '@codemode/contracts';
import { RunLedger } from '@codemode/events';
import { NotFoundApiException } from '../http/api-errors';
import { JsonBody, RequestTokensDue, Session, Tenant } from '../http/request-params';
import type { ParsedBody } from '../http/request-context';
import { StoredBytesInterceptor } from '../quotas/stored-bytes.interceptor';
import { TenantLimitException } from '../quotas/tenant-limit.exception';
import { AdmittedByCall, retryAfter } from '../quotas/tenant-rate.guard';
import { AbortService } from './abort.service';
import { CodeModeCalls } from './code-mode-calls';
import { ToolResultsService } from './tool-results.service';

@Controller('v1/sessions/:sid')
export class RunsController {
  constructor(
    private readonly calls: CodeModeCalls,
    private readonly abortService: AbortService,
    private readonly toolResults: ToolResultsService,
    private readonly runs: RunLedger,
  ) {}

  @Post('exec')
  @HttpCode(200)
  @AdmittedByCall()
  exec(
    @Tenant() tenant: string,
    @Param('sid') sessionId: string,
    @JsonBody() body: ParsedBody,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @RequestTokensDue() requestTokens: number,
    @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<CodeModeResult> {
    return this.answer(res, this.calls.exec(tenant, sessionId, body, idempotencyKey, requestTokens));
  }

  @Post('wait')
  @HttpCode(200)
  @AdmittedByCall()
  wait(
    @Tenant() tenant: string,
    @Param('sid') sessionId: string,
    @JsonBody() body: ParsedBody,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @RequestTokensDue() requestTokens: number,
    @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<CodeModeResult> {
    return this.answer(res, this.calls.wait(tenant, sessionId, body, idempotencyKey, requestTokens));
  }

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

  /** A quota refusal's answer carries `Retry-After`. */
  private async answer(res: ServerResponse, call: Promise<CodeModeResult>): Promise<CodeModeResult> {
    try {
      return await call;
    } catch (error) {
      if (error instanceof TenantLimitException) retryAfter(res, error);
      throw error;
    }
  }

  @Get('runs/:runId')
  async get(@Session() ref: SessionRef, @Param('runId') runId: string): Promise<RunView> {
    const run = RUN_ID_PATTERN.test(runId) ? await this.runs.get(ref, runId) : null;
    if (!run) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    return run;
  }
}

import { Controller, Delete, Get, Headers, HttpCode, Param, Post } from '@nestjs/common';
import { RUN_ID_PATTERN, type CodeModeResult, type RunView, type SessionRef } from '@codemode/contracts';
import { RunLedger } from '@codemode/events';
import { NotFoundApiException } from '../core/api-errors';
import { JsonBody, requireObjectBody, Session, Tenant } from '../core/request-params';
import type { ParsedBody } from '../core/request-context';
import { AbortService } from './abort.service';
import { ExecService } from './exec.service';
import { ToolResultsService } from './tool-results.service';
import { WaitService } from './wait.service';

@Controller('v1/sessions/:sid')
export class RunsController {
  constructor(
    private readonly execService: ExecService,
    private readonly waitService: WaitService,
    private readonly abortService: AbortService,
    private readonly toolResults: ToolResultsService,
    private readonly runs: RunLedger,
  ) {}

  @Post('exec')
  @HttpCode(200)
  exec(
    @Tenant() tenant: string,
    @Param('sid') sessionId: string,
    @JsonBody() body: ParsedBody,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
  ): Promise<CodeModeResult> {
    return this.execService.exec(tenant, sessionId, body, idempotencyKey);
  }

  @Post('wait')
  @HttpCode(200)
  wait(@Tenant() tenant: string, @Param('sid') sessionId: string, @JsonBody() body: ParsedBody): Promise<CodeModeResult> {
    return this.waitService.wait(tenant, sessionId, body);
  }

  @Delete('runs/:runId')
  @HttpCode(200)
  abort(@Session() ref: SessionRef, @Param('runId') runId: string): Promise<CodeModeResult> {
    if (!RUN_ID_PATTERN.test(runId)) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    return this.abortService.abort(ref, runId);
  }

  @Post('runs/:runId/tool-results')
  @HttpCode(202)
  submitToolResults(@Session() ref: SessionRef, @Param('runId') runId: string, @JsonBody() body: ParsedBody): Promise<{ accepted: number }> {
    if (!RUN_ID_PATTERN.test(runId)) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    return this.toolResults.submit(ref, runId, requireObjectBody(body));
  }

  @Get('runs/:runId')
  async get(@Session() ref: SessionRef, @Param('runId') runId: string): Promise<RunView> {
    const run = RUN_ID_PATTERN.test(runId) ? await this.runs.get(ref, runId) : null;
    if (!run) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    return run;
  }
}

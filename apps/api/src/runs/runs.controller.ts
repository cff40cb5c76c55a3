import { Controller, Delete, Get, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { RUN_ID_PATTERN, type CodeModeResult, type RunView, type SessionRef } from '@codemode/contracts';
import { RunLedger } from '@codemode/events';
import { NotFoundApiException } from '../core/api-errors';
import { JsonBody, requireObjectBody, Session, Tenant } from '../core/request-params';
import type { ParsedBody } from '../core/request-context';
import { TenantLimitException } from '../quotas/tenant-limit.exception';
import { TenantLimits } from '../quotas/tenant-limits.service';
import { retryAfter } from '../quotas/tenant-rate.guard';
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
    private readonly limits: TenantLimits,
  ) {}

  @Post('exec')
  @HttpCode(200)
  exec(
    @Tenant() tenant: string,
    @Param('sid') sessionId: string,
    @JsonBody() body: ParsedBody,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<CodeModeResult> {
    return this.inflight(tenant, res, (rank) => this.execService.exec(tenant, sessionId, body, idempotencyKey, rank));
  }

  @Post('wait')
  @HttpCode(200)
  wait(
    @Tenant() tenant: string,
    @Param('sid') sessionId: string,
    @JsonBody() body: ParsedBody,
    @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<CodeModeResult> {
    return this.inflight(tenant, res, () => this.waitService.wait(tenant, sessionId, body));
  }

  @Delete('runs/:runId')
  @HttpCode(200)
  abort(@Session() ref: SessionRef, @Param('runId') runId: string): Promise<CodeModeResult> {
    if (!RUN_ID_PATTERN.test(runId)) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    return this.abortService.abort(ref, runId);
  }

  @Post('runs/:runId/tool-results')
  @HttpCode(202)
  submitToolResults(
    @Session() ref: SessionRef,
    @Param('runId') runId: string,
    @JsonBody() body: ParsedBody,
  ): Promise<{ accepted: number }> {
    if (!RUN_ID_PATTERN.test(runId)) throw new NotFoundApiException(`run ${runId} not found in session ${ref.sessionId}.`);
    return this.toolResults.submit(ref, runId, requireObjectBody(body));
  }

  /** SPEC §10: past the tenant's in-flight quota, 429 before anything is recorded (an Idempotency-Key is not consumed). */
  private async inflight(tenant: string, res: ServerResponse, call: (rank: number) => Promise<CodeModeResult>): Promise<CodeModeResult> {
    try {
      return await this.limits.inflight(tenant, call);
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

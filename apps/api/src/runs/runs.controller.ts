import { Controller, Delete, Get, Headers, HttpCode, Param, Post, Res, UseInterceptors } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { RUN_ID_PATTERN, SESSION_ID_PATTERN, type CodeModeResult, type RunView, type SessionRef } from '@codemode/contracts';
import { hostFailureResult } from '@codemode/cells';
import { RunLedger } from '@codemode/events';
import { NotFoundApiException } from '../core/api-errors';
import { JsonBody, Session, Tenant } from '../core/request-params';
import type { ParsedBody } from '../core/request-context';
import { StoredBytesInterceptor } from '../quotas/stored-bytes.interceptor';
import { TenantLimitException } from '../quotas/tenant-limit.exception';
import { STORAGE_QUOTA_ERROR, TenantLimits } from '../quotas/tenant-limits.service';
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
    return this.inflight(tenant, sessionId, body, res, (rank) => this.execService.exec(tenant, sessionId, body, idempotencyKey, rank));
  }

  @Post('wait')
  @HttpCode(200)
  wait(
    @Tenant() tenant: string,
    @Param('sid') sessionId: string,
    @JsonBody() body: ParsedBody,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<CodeModeResult> {
    return this.inflight(tenant, sessionId, body, res, () => this.waitService.wait(tenant, sessionId, body, idempotencyKey));
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

  /**
   * SPEC §10: past the tenant's in-flight quota, 429 before anything is recorded (an
   * Idempotency-Key is not consumed); past its stored bytes, `failed`/`runtime_unavailable` before
   * anything is recorded (checked while the in-flight slot is taken, so it costs no round trip of
   * its own). After the call, the session is measured for the tenant's stored bytes.
   */
  private async inflight(
    tenant: string,
    sessionId: string,
    body: ParsedBody,
    res: ServerResponse,
    call: (rank: number) => Promise<CodeModeResult>,
  ): Promise<CodeModeResult> {
    const room = this.limits.storageRoom(tenant);
    room.catch(() => undefined);
    try {
      return await this.limits.inflight(tenant, async (rank) => {
        if (!(await room)) return hostFailureResult(STORAGE_QUOTA_ERROR, 'runtime_unavailable', restartSafe(body));
        try {
          return await call(rank);
        } finally {
          if (SESSION_ID_PATTERN.test(sessionId)) this.limits.storageWritten({ tenant, sessionId });
        }
      });
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

/** What a refused exec answers for `replaySafe`: the body's own `restartSafe`, as any refused input. */
function restartSafe(body: ParsedBody): boolean {
  return (
    body.kind === 'json' &&
    typeof body.value === 'object' &&
    body.value !== null &&
    (body.value as Record<string, unknown>).restartSafe === true
  );
}

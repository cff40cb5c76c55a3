import { Injectable } from '@nestjs/common';
import { SESSION_ID_PATTERN, type CodeModeResult } from '@codemode/contracts';
import { hostFailureResult } from '@codemode/cells';
import type { ParsedBody } from '../http/request-context';
import { STORAGE_QUOTA_ERROR, TenantLimits } from '../quotas/tenant-limits.service';
import { ExecService, type ExecRecorded } from './exec.service';
import { WaitService } from './wait.service';

/**
 * `exec` and `wait` under the tenant's quotas, whichever surface asked (REST, MCP: SPEC §14).
 * SPEC §10: past the tenant's request rate or in-flight quota, TenantLimitException before
 * anything is recorded (an Idempotency-Key is not consumed), both decided by one admission
 * script: `requestTokens` are the rate's tokens the request left to it (a REST call's; an MCP
 * message's were taken with its POST). Past its stored bytes, `failed`/`runtime_unavailable`
 * before anything is recorded (read beside the admission). After the call, the session is
 * measured for the tenant's stored bytes.
 */
@Injectable()
export class CodeModeCalls {
  constructor(
    private readonly execService: ExecService,
    private readonly waitService: WaitService,
    private readonly limits: TenantLimits,
  ) {}

  exec(
    tenant: string,
    sessionId: string,
    body: ParsedBody,
    idempotencyKey: string | undefined,
    requestTokens: number,
    recorded?: ExecRecorded,
  ): Promise<CodeModeResult> {
    return this.inflight(tenant, sessionId, body, requestTokens, (rank) =>
      this.execService.exec(tenant, sessionId, body, idempotencyKey, rank, recorded),
    );
  }

  wait(
    tenant: string,
    sessionId: string,
    body: ParsedBody,
    idempotencyKey: string | undefined,
    requestTokens: number,
  ): Promise<CodeModeResult> {
    return this.inflight(tenant, sessionId, body, requestTokens, () => this.waitService.wait(tenant, sessionId, body, idempotencyKey));
  }

  private async inflight(
    tenant: string,
    sessionId: string,
    body: ParsedBody,
    requestTokens: number,
    call: (rank: number) => Promise<CodeModeResult>,
  ): Promise<CodeModeResult> {
    return this.limits.inflight(tenant, requestTokens, async (rank, storage) => {
      if (!(await storage)) return hostFailureResult(STORAGE_QUOTA_ERROR, 'runtime_unavailable', restartSafe(body));
      try {
        return await call(rank);
      } finally {
        if (SESSION_ID_PATTERN.test(sessionId)) this.limits.storageWritten({ tenant, sessionId });
      }
    });
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

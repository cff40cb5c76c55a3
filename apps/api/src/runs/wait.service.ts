import { Injectable } from '@nestjs/common';
import { SESSION_ID_PATTERN, type CodeModeResult, type SessionRef } from '@codemode/contracts';
import { isStoreUnavailable, RunLedger } from '@codemode/events';
import { checkWaitInput, emptyTelemetry, failedInputResult } from '@codemode/sandbox';
import { BODY_NOT_JSON_ERROR, BODY_TOO_LARGE_ERROR, type ParsedBody } from '../core/request-context';
import { hostFailure, STORE_UNAVAILABLE_ERROR } from './host-results';

export const RUN_UNAVAILABLE_ERROR = 'code mode run is unavailable or expired.';

/**
 * `wait` (SPEC §3). Until suspension exists no run can be parked, so every well-formed wait is
 * answered from the run's state: unknown or ended runs are unavailable or expired.
 */
@Injectable()
export class WaitService {
  constructor(private readonly runs: RunLedger) {}

  async wait(tenant: string, sessionId: string, body: ParsedBody): Promise<CodeModeResult> {
    if (!SESSION_ID_PATTERN.test(sessionId)) {
      return failedInputResult('sessionId must match [A-Za-z0-9._:-]{1,128}.', emptyTelemetry(), false);
    }
    const ref: SessionRef = { tenant, sessionId };
    if (body.kind !== 'json') {
      const error = body.kind === 'too_large' ? BODY_TOO_LARGE_ERROR : BODY_NOT_JSON_ERROR;
      return this.record(ref, { body: body.kind }, failedInputResult(error, emptyTelemetry(), false));
    }
    const check = checkWaitInput(body.value);
    if (!check.ok) return this.record(ref, body.value, failedInputResult(check.error, emptyTelemetry(), false));
    try {
      const run = await this.runs.get(ref, check.runId);
      const result = failedInputResult(RUN_UNAVAILABLE_ERROR, emptyTelemetry(), run?.restartSafe ?? false);
      return this.record(ref, { runId: check.runId }, result);
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      return hostFailure(STORE_UNAVAILABLE_ERROR, 'runtime_unavailable', false);
    }
  }

  private async record(ref: SessionRef, input: unknown, result: CodeModeResult): Promise<CodeModeResult> {
    try {
      await this.runs.reject(ref, 'wait', input, result);
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
    }
    return result;
  }
}

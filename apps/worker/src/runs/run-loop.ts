import type { Limits } from '@codemode/contracts';
import { failedOutcome, TIMEOUT_MESSAGE, type CellOutcome, type SandboxPool } from '@codemode/sandbox';
import type { RunToolHost } from '../tools/run-tool-host';

/**
 * `awaitResults: true`: a cell that would park is resumed at once with a fresh budget, output
 * gathered across resumes, until it completes or fails or `snapshotTtlSeconds` have passed.
 */
export async function keepResuming(
  pool: SandboxPool,
  runId: string,
  limits: Limits,
  first: CellOutcome,
  host: RunToolHost,
): Promise<CellOutcome> {
  const until = Date.now() + limits.snapshotTtlSeconds * 1000;
  const output = [...first.output];
  let outcome = first;
  while (outcome.status === 'waiting') {
    const left = until - Date.now();
    if (left <= 0) {
      pool.discard(runId);
      return failedOutcome({ code: 'timeout', phase: 'guest', error: TIMEOUT_MESSAGE }, { ...outcome, output });
    }
    const timeoutMs = Math.min(limits.timeoutMs, left);
    host.beginLeg(timeoutMs);
    outcome = await pool.resume(runId, { timeoutMs, awaitResults: true }, host);
    output.push(...outcome.output);
  }
  return { ...outcome, output };
}

/** The sandbox itself failed (not the cell): a host-phase internal error. */
export function hostFailureOutcome(): CellOutcome {
  return failedOutcome({
    code: 'internal_error',
    phase: 'host',
    error: 'code mode sandbox failed to run the cell; the failure was logged.',
  });
}

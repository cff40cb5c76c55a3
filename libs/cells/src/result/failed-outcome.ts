import type { CodeModeErrorCode, FailurePhase } from '@codemode/contracts';
import type { CellOutcome, FailedOutcome } from '../outcome';

/** Why a leg failed, as its result will say it. */
export interface LegFailure {
  code: CodeModeErrorCode;
  phase: FailurePhase;
  error: string;
}

/**
 * A failed leg outcome, the one way to make one outside the sandbox. `from` is the leg it replaces
 * (what it printed and whether it dispatched host work carry over); without it, a leg that printed
 * nothing and, unless `bridgeDispatchStarted` says otherwise, dispatched nothing.
 */
export function failedOutcome(
  failure: LegFailure,
  from: Pick<CellOutcome, 'output' | 'consoleTruncated' | 'bridgeDispatchStarted'> | { bridgeDispatchStarted: boolean } = {
    bridgeDispatchStarted: false,
  },
): FailedOutcome {
  return {
    status: 'failed',
    ...failure,
    output: 'output' in from ? from.output : [],
    consoleTruncated: 'consoleTruncated' in from ? from.consoleTruncated : false,
    bridgeDispatchStarted: from.bridgeDispatchStarted,
  };
}

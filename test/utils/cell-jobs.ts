import { SPEC_DEFAULT_LIMITS, SPEC_DEFAULT_SHELL } from '@codemode/config';
import type { CellJob } from '@codemode/contracts';

/** A new cell's job as the API sends it (a trivial cell of tenant `acme`, session `s1`), for specs of the cell transports. */
export function trivialCellJob(runId: string): CellJob {
  return {
    tenant: 'acme',
    sessionId: 's1',
    runId,
    spec: {
      title: 't',
      code: 'return 1',
      restartSafe: false,
      awaitResults: false,
      limits: { ...SPEC_DEFAULT_LIMITS },
      shell: { ...SPEC_DEFAULT_SHELL },
      agentId: null,
    },
    replyTo: 'r',
    requestedAt: Date.now(),
  };
}

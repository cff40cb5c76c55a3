import type { Limits, SessionRef, ShellConfig } from '@codemode/contracts';
import type { BridgeCall } from '@codemode/cells';

/** What a run's tool calls need to know of the run: identity, fence, limits and what its session enables. */
export interface ToolRun {
  ref: SessionRef;
  runId: string;
  epoch: number;
  limits: Limits;
  shell: ShellConfig;
  agentId: string | null;
  awaitResults: boolean;
  /** SPEC §15: the session has `agents: true`, so the run has `agents.run`. */
  agents: boolean;
  /** Replay-safe run (SPEC §6): inputs and outcomes of its tool calls are kept in the log for replay. */
  restartSafe: boolean;
}

/** SPEC §16: `<runId>:<n>`, n numbered by the sandbox in the order the guest made its tool calls. */
export function callKeyOf(run: Pick<ToolRun, 'runId'>, call: BridgeCall): string | undefined {
  return call.callNumber === undefined ? undefined : `${run.runId}:${call.callNumber}`;
}

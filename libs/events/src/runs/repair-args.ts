import { REPAIR_REASONS, type CodeModeResult, type Repair } from '@codemode/contracts';
import { REPAIR_ATTEMPTS_RULE } from '@codemode/config';

/**
 * SPEC §16: how a cell's end moves its session's count of failed cells in a row
 * (lua/includes/repair.lua's mode). An abort is no cell's outcome; a `runtime_unavailable` failure
 * was the host's, so it counts only when the run had dispatched a tool call.
 */
function repairMode(result: CodeModeResult): 'cell' | 'host' | '' {
  if (result.status !== 'failed') return 'cell';
  if (result.code === 'aborted') return '';
  return result.code === 'runtime_unavailable' ? 'host' : 'cell';
}

/** The repair arguments of finish-run.lua and reject-exec.lua (includes/repair.lua's repair_args). */
export function repairArgs(result: CodeModeResult): string[] {
  return [
    repairMode(result),
    String(REPAIR_ATTEMPTS_RULE.defaultValue),
    REPAIR_REASONS.allowed,
    REPAIR_REASONS.dispatched,
    REPAIR_REASONS.exhausted,
  ];
}

/** The result as recorded: with the `repair` the script gave it, if any. */
export function withRepair(result: CodeModeResult, repairJson: string | null | undefined): CodeModeResult {
  if (!repairJson || result.status !== 'failed') return result;
  return { ...result, repair: JSON.parse(repairJson) as Repair };
}

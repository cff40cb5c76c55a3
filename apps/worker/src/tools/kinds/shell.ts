import { shellScopeKey, type ShellConfig } from '@codemode/contracts';
import type { ShellCaller, ShellHost } from '../../shell/shell-host.service';
import { ToolCallError } from '../tool-call-error';
import type { KindCall, ResolvedTool, ToolKind } from './tool-kind';

type ShellTool = (shell: Pick<ShellHost, 'exec' | 'process'>, caller: ShellCaller, input: never, config: ShellConfig) => Promise<unknown>;

/** The shell's core tools (SPEC §7), by tool name. */
const SHELL_TOOLS: ReadonlyMap<string, ShellTool> = new Map<string, ShellTool>([
  ['exec', (shell, caller, input, config) => shell.exec(caller, input, config)],
  ['process', (shell, caller, input, config) => shell.process(caller, input, config)],
]);

/**
 * `exec` and `process` (SPEC §7): run by this worker's shell in the run's scope, within what is
 * left of the leg (they yield a session id past it), keyed by the call's callKey (SPEC §16).
 */
export class ShellKind implements ToolKind {
  readonly answeredBy = 'worker';

  constructor(private readonly shell: Pick<ShellHost, 'exec' | 'process'>) {}

  handles({ entry }: ResolvedTool): boolean {
    return entry.source === 'openclaw' && SHELL_TOOLS.has(entry.toolName);
  }

  async call({ entry, run, catalog, input, callKey, budgetLeft }: KindCall): Promise<unknown> {
    const tool = SHELL_TOOLS.get(entry.toolName);
    if (!tool) throw new ToolCallError(`tool ${entry.callableName} has no implementation on this worker.`);
    const caller: ShellCaller = {
      ref: run.ref,
      scopeKey: shellScopeKey(run.ref.sessionId, run.agentId),
      insideCell: { remainingBudgetMs: budgetLeft(), processCallable: catalog.coreCallable('process'), callKey },
    };
    return tool(this.shell, caller, input as never, run.shell);
  }
}

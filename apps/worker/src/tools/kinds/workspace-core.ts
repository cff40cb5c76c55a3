import { isWorkspaceToolName, runCoreTool } from '@codemode/tools';
import type { ShellHost } from '../../shell/shell-host.service';
import type { KindCall, ResolvedTool, ToolKind } from './tool-kind';

/** The core tools that read the session's workspace (`read`, `ls`, `find`, `grep`), answered in this process. */
export class WorkspaceCoreKind implements ToolKind {
  readonly answeredBy = 'worker';
  readonly inProcess = true;

  constructor(private readonly shell: Pick<ShellHost, 'workspaceOf'>) {}

  handles({ entry }: ResolvedTool): boolean {
    return entry.source === 'openclaw' && isWorkspaceToolName(entry.toolName);
  }

  async call({ entry, run, input }: KindCall): Promise<unknown> {
    return runCoreTool(entry.toolName, input, { workspaceRoot: this.shell.workspaceOf(run.ref) });
  }
}

import type { McpServers } from '@codemode/tools';
import type { ShellHost } from '../../shell/shell-host.service';
import { McpKind } from './mcp';
import { PlatformAnsweredKind } from './platform-answered';
import { PlatformSurfaceKind } from './platform-surface';
import { ShellKind } from './shell';
import type { SurfaceHandler } from './surface-handlers';
import type { ToolKind } from './tool-kind';
import { WebhookKind, type WebhookDeps } from './webhook';
import { WorkspaceCoreKind } from './workspace-core';

/** What the tool kinds need from the worker. */
export interface ToolKindDeps {
  shell: Pick<ShellHost, 'workspaceOf' | 'exec' | 'process'>;
  /** The deployment's MCP connections, null when it configures none. */
  mcp: () => Pick<McpServers, 'callTool'> | null;
  webhooks: WebhookDeps;
  /** The worker's platform surface handlers, by dotted name (`surfaceHandlers`). */
  surfaces: Readonly<Record<string, SurfaceHandler>>;
}

/**
 * Every kind of tool call, for one run (the platform-answered kind keeps the run's awaited
 * calls). A call belongs to the first kind that handles its tool: the platform's calls come
 * first, as a client tool without endpoint is the platform's in a run that parks and the
 * webhook's otherwise. A new kind is one file in this folder and one line here.
 */
export function toolKinds(deps: ToolKindDeps): ToolKind[] {
  return [
    new PlatformAnsweredKind(),
    new PlatformSurfaceKind(deps.surfaces),
    new WebhookKind(deps.webhooks),
    new WorkspaceCoreKind(deps.shell),
    new ShellKind(deps.shell),
    new McpKind(deps.mcp),
  ];
}

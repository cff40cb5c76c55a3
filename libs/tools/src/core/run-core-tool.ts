import { ToolAbortedError, ToolError, UnknownCoreToolError, WorkspaceIoError } from '../errors';
import { findTool, type FindResult } from './find';
import { grepTool, type GrepResult } from './grep';
import { FindInputSchema, GrepInputSchema, LsInputSchema, parseToolInput, ReadInputSchema } from './inputs';
import { lsTool, type LsResult } from './ls';
import { readTool, type ReadResult } from './read';
import { SHARED_WORKSPACES } from './open-workspaces';
import type { Workspace } from './workspace-path';

/** Core tools this library executes (the shell tools `exec`/`process` run in libs/shell). */
export const WORKSPACE_TOOL_NAMES = ['read', 'ls', 'find', 'grep'] as const;
export type WorkspaceToolName = (typeof WORKSPACE_TOOL_NAMES)[number];

export type CoreToolResult = ReadResult | LsResult | FindResult | GrepResult;

export interface CoreToolContext {
  /** The session's workspace directory; created when missing. Every path is confined to it. */
  readonly workspaceRoot: string;
  /** Aborts a running find or grep walk (run aborted or expired). */
  readonly signal?: AbortSignal;
}

export function isWorkspaceToolName(name: string): name is WorkspaceToolName {
  return (WORKSPACE_TOOL_NAMES as readonly string[]).includes(name);
}

/**
 * Runs one of the workspace tools (read, ls, find, grep) over the session workspace.
 * @throws ToolInputError when the input is invalid (naming the field), WorkspacePathEscapeError
 * for a path outside the workspace, and the other `ToolError`s of errors.ts; every message is
 * written for the model.
 */
export async function runCoreTool(name: string, input: unknown, context: CoreToolContext): Promise<CoreToolResult> {
  if (!isWorkspaceToolName(name)) {
    throw new UnknownCoreToolError(name);
  }
  if (context.signal?.aborted) {
    throw new ToolAbortedError(name);
  }
  try {
    return await dispatch(name, input, context);
  } catch (error) {
    if (error instanceof ToolError) {
      throw error;
    }
    // Raw Node errors print absolute host paths; the guest gets the errno code only.
    throw new WorkspaceIoError(name, (error as NodeJS.ErrnoException | undefined)?.code ?? 'EIO');
  }
}

async function dispatch(name: WorkspaceToolName, input: unknown, context: CoreToolContext): Promise<CoreToolResult> {
  const run = toolOf(name, input);
  return SHARED_WORKSPACES.use(context.workspaceRoot, (workspace) => run(workspace, context.signal));
}

/** The tool with its input checked (before the workspace is opened). */
function toolOf(name: WorkspaceToolName, input: unknown): (workspace: Workspace, signal?: AbortSignal) => Promise<CoreToolResult> {
  switch (name) {
    case 'read': {
      const parsed = parseToolInput(name, ReadInputSchema, input);
      return (workspace) => readTool(workspace, parsed);
    }
    case 'ls': {
      const parsed = parseToolInput(name, LsInputSchema, input);
      return (workspace) => lsTool(workspace, parsed);
    }
    case 'find': {
      const parsed = parseToolInput(name, FindInputSchema, input);
      return (workspace, signal) => findTool(workspace, parsed, signal);
    }
    case 'grep': {
      const parsed = parseToolInput(name, GrepInputSchema, input);
      return (workspace, signal) => grepTool(workspace, parsed, signal);
    }
  }
}

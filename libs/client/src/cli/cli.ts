import { resolve } from 'node:path';
import { packageVersion } from '@codemode/config';
import { CodeModeClient } from '../codemode-client';
import { parseCli, USAGE, type CliCommand, type CliEnv } from './args';
import { eventsCommand } from './commands/events';
import { execCommand, waitCommand } from './commands/exec';
import { nodeCommand } from './node-agent/node-command';
import { shellCommand } from './commands/shell';
import { toolsGetCommand, toolsPutCommand } from './commands/tools';
import type { CliIo, CommandContext } from './context';
import { CliInputError, UsageError } from './errors';
import { ExitCode, exitCodeForError } from './exit-codes';

/** The whole CLI as a function of argv, environment and I/O; returns the exit code. */
export async function runCli(argv: string[], env: CliEnv, io: CliIo): Promise<number> {
  let command: CliCommand;
  try {
    command = parseCli(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`codemode: ${error.message}\n\n${USAGE}`);
    return ExitCode.usage;
  }
  if (command.kind === 'help') {
    io.stdout.write(USAGE);
    return ExitCode.ok;
  }
  const ctx: CommandContext = { client: new CodeModeClient({ baseUrl: command.url, apiKey: command.apiKey }), io, json: command.json };
  try {
    return await dispatch(ctx, command);
  } catch (error) {
    if (io.signal.aborted) {
      // Only the request is cancelled: a cell already sent keeps running on the server.
      io.stderr.write('interrupted (a cell already sent may still finish on the server)\n');
      return ExitCode.interrupted;
    }
    // Connection failures already read "cannot reach the Code Mode API at <url>: <reason>".
    io.stderr.write(`codemode: ${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodeForError(error);
  }
}

function dispatch(ctx: CommandContext, command: Exclude<CliCommand, { kind: 'help' }>): Promise<number> {
  switch (command.kind) {
    case 'exec':
      return execCommand(ctx, command);
    case 'wait':
      return waitCommand(ctx, command);
    case 'events':
      return eventsCommand(ctx, command);
    case 'shell':
      return shellCommand(ctx, command);
    case 'tools-put':
      return toolsPutCommand(ctx, command);
    case 'tools-get':
      return toolsGetCommand(ctx, command);
    case 'mcp':
      return loadMcpCommand().then(({ mcpCommand }) => mcpCommand(ctx, { sessionId: command.sessionId, version: packageVersion() }));
    case 'node':
      return nodeCommand(ctx, { name: command.name, allow: command.allow, root: resolve(command.root), commands: command.commands });
  }
}

const MCP_SDK_MISSING = 'codemode mcp needs the MCP SDK installed beside @codemode/client: npm install @modelcontextprotocol/sdk@^1.32.2';

/**
 * The MCP SDK is loaded by `codemode mcp` only: it is an optional peer of the @codemode/client
 * package (a library user does not install an MCP server stack to call REST), so its absence is
 * a sentence naming what to install, not a stack trace.
 */
async function loadMcpCommand(): Promise<typeof import('./commands/mcp')> {
  try {
    return await import('./commands/mcp');
  } catch (error) {
    const missing = (error as { code?: unknown }).code === 'MODULE_NOT_FOUND' && String(error).includes('@modelcontextprotocol/sdk');
    if (missing) throw new CliInputError(MCP_SDK_MISSING);
    throw error;
  }
}

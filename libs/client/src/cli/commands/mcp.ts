import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { CodeModeClient } from '../../codemode-client';
import type { CommandContext } from '../context';
import { CliInputError } from '../errors';
import { ExitCode, type ExitCodeValue } from '../exit-codes';

export interface McpArgs {
  sessionId: string;
  version: string;
}

/**
 * `codemode mcp --session <sid>` (SPEC §14): a stdio MCP server for desktop MCP clients that
 * forwards every message, both ways, to the service's `/mcp` in the session (`X-Codemode-Session`),
 * so what `/mcp` answers — tools, calls, refusals, tasks and their notifications — reaches the client
 * unchanged, and the bridge holds no state of its own (no task, no tool list). stdout carries the
 * protocol only; the bridge's own messages go to stderr. It runs until its client closes stdin (or Ctrl-C).
 */
export async function mcpCommand(ctx: CommandContext, args: McpArgs): Promise<ExitCodeValue> {
  const stdio = ctx.io.stdio;
  if (!stdio) throw new CliInputError('codemode mcp needs the process stdin and stdout.');
  // Fails here, before any client connects, when the service is unreachable or the key is refused.
  await ctx.client.toolDefinitions(args.sessionId, 'mcp');
  const local = new StdioServerTransport(stdio.stdin, stdio.stdout);
  const remote = remoteMcp(ctx.client, args.sessionId);
  local.onmessage = (message) =>
    void remote.send(message).catch(async (error: unknown) => {
      // A refused POST (a quota's 429, a bad session) carries the JSON-RPC error the request is answered with.
      if (isJSONRPCRequest(message)) await local.send(refusalOf(message.id, error)).catch(() => undefined);
      else report(ctx, error);
    });
  remote.onmessage = (message) => void local.send(message).catch((error: unknown) => report(ctx, error));
  remote.onerror = (error) => report(ctx, error);
  const ended = new Promise<void>((resolve) => {
    stdio.stdin.once('end', resolve);
    stdio.stdin.once('close', resolve);
    ctx.io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await remote.start();
  await local.start();
  ctx.io.stderr.write(`codemode mcp: serving exec and wait of session ${args.sessionId} on stdio, through ${ctx.client.baseUrl}/mcp\n`);
  await ended;
  await remote.close().catch(() => undefined);
  await local.close();
  return ExitCode.ok;
}

/** The service's `/mcp`, in `sessionId`, with the client's key. */
function remoteMcp(client: CodeModeClient, sessionId: string): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`${client.baseUrl.replace(/\/+$/, '')}/mcp`), {
    requestInit: { headers: { ...client.authHeaders(), 'x-codemode-session': sessionId } },
  });
}

/** The JSON-RPC error of a refused POST (its body, after the SDK's `Error POSTing to endpoint: `), else the error's message as -32000. */
function refusalOf(id: string | number, error: unknown): JSONRPCMessage {
  const text = error instanceof Error ? error.message : String(error);
  const body = text.indexOf('{');
  try {
    const sent = JSON.parse(text.slice(body)) as { error?: { code: number; message: string; data?: unknown } };
    if (body >= 0 && sent.error) return { jsonrpc: '2.0', id, error: sent.error };
  } catch {
    // Not a JSON-RPC body: the transport's own message.
  }
  return { jsonrpc: '2.0', id, error: { code: -32000, message: text } };
}

function report(ctx: CommandContext, error: unknown): void {
  ctx.io.stderr.write(`codemode mcp: ${error instanceof Error ? error.message : String(error)}\n`);
}

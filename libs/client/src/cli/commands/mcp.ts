import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { JSON_RPC_INVALID_PARAMS, JsonRpcRefusal, mcpToolResult, unknownToolError, type CodeModeExecInput } from '@codemode/contracts';
import type { CodeModeClient } from '../../codemode-client';
import { CodeModeApiError } from '../../errors';
import type { CommandContext } from '../context';
import { CliInputError } from '../errors';
import { ExitCode, type ExitCodeValue } from '../exit-codes';

/** How often the bridge looks at the session's tool definitions, to tell its client when they change. */
export const DEFINITIONS_RECHECK_MS = 5_000;

export interface McpArgs {
  sessionId: string;
  version: string;
}

/**
 * `codemode mcp --session <sid>` (SPEC §14): exec and wait as a stdio MCP server, for desktop MCP
 * clients, forwarding each call to the running service over REST: `tools/list` answers the
 * session's definitions (`GET …/tools/definitions?format=mcp`), `tools/call` runs `exec`/`wait`
 * and answers as `/mcp` does. stdout carries the protocol only; the bridge's own messages go to
 * stderr. It runs until its client closes stdin (or Ctrl-C).
 */
export async function mcpCommand(ctx: CommandContext, args: McpArgs): Promise<ExitCodeValue> {
  const stdio = ctx.io.stdio;
  if (!stdio) throw new CliInputError('codemode mcp needs the process stdin and stdout.');
  const { client } = ctx;
  // Fails here, before any client connects, when the service is unreachable or the key is refused.
  let definitions = await listTools(client, args.sessionId);
  const server = new Server({ name: 'codemode', version: args.version }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    definitions = await refusedAsJsonRpc(listTools(client, args.sessionId));
    return { tools: definitions };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: input = {} } = request.params;
    if (name !== 'exec' && name !== 'wait') throw new JsonRpcRefusal(JSON_RPC_INVALID_PARAMS, unknownToolError(name));
    const call =
      name === 'exec'
        ? client.exec(args.sessionId, input as unknown as CodeModeExecInput)
        : client.wait(args.sessionId, typeof input.runId === 'string' ? input.runId : '');
    return mcpToolResult(await refusedAsJsonRpc(call));
  });
  const recheck = setInterval(() => {
    listTools(client, args.sessionId).then(
      (now) => {
        if (JSON.stringify(now) === JSON.stringify(definitions)) return;
        definitions = now;
        void server.sendToolListChanged().catch(() => undefined);
      },
      () => undefined,
    );
  }, DEFINITIONS_RECHECK_MS);
  const ended = new Promise<void>((resolve) => {
    stdio.stdin.once('end', resolve);
    stdio.stdin.once('close', resolve);
    ctx.io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.connect(new StdioServerTransport(stdio.stdin, stdio.stdout));
  ctx.io.stderr.write(`codemode mcp: serving exec and wait of session ${args.sessionId} on stdio\n`);
  await ended;
  clearInterval(recheck);
  await server.close();
  return ExitCode.ok;
}

async function listTools(client: CodeModeClient, sessionId: string): Promise<Tool[]> {
  return (await client.toolDefinitions(sessionId, 'mcp')).tools;
}

/** An HTTP refusal of the service (a quota's 429, Redis away's 503) is the JSON-RPC error `/mcp` sends for it. */
async function refusedAsJsonRpc<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (!(error instanceof CodeModeApiError)) throw error;
    throw JsonRpcRefusal.ofHttp(error.status, typeof error.body === 'string' ? { error: error.body, code: 'internal_error' } : error.body);
  }
}

import { platform } from 'node:os';
import { NodeInvocationSchema, NodePairedSchema, type NodeConnectInput, type NodeInvocation } from '@codemode/contracts';
import type { CodeModeClient } from '../../codemode-client';
import { CodeModeApiError } from '../../errors';
import type { CommandContext } from '../context';
import { ExitCode, type ExitCodeValue } from '../exit-codes';
import { nodeHandlers, type NodeHandler, type NodeHandlerOptions } from './node-handlers';

/** Reconnect backoff: doubled from the first to the last after each failed attempt, reset once paired. */
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 5_000;
/** Attempts to deliver one answer (the API instance it reaches may be restarting). */
const ANSWER_ATTEMPTS = 5;

export interface NodeArgs extends NodeHandlerOptions {
  name: string;
}

/**
 * `codemode node --name <name> [--allow <command>]... [--root <dir>] [--command <name>=<exe>]...`
 * (SPEC §15): the reference node. Connects to the API with the CLI's key, advertises its
 * commands, serves invocations and answers each with `POST /v1/nodes/{id}/results`; reconnects
 * with backoff (as itself: the id and secret it was paired with) whenever the connection ends,
 * until Ctrl-C. An invocation in flight when the connection drops still answers.
 */
export async function nodeCommand(ctx: CommandContext, args: NodeArgs): Promise<ExitCodeValue> {
  const { client, io } = ctx;
  const handlers = nodeHandlers(args);
  const input: NodeConnectInput = { name: args.name, platform: platform(), commands: [...handlers.keys()] };
  let backoff = BACKOFF_FIRST_MS;
  while (!io.signal.aborted) {
    try {
      for await (const message of client.connectNode(input, io.signal)) {
        if (message.event === 'paired') {
          const paired = NodePairedSchema.parse(JSON.parse(message.data));
          input.id = paired.id;
          input.secret = paired.secret;
          backoff = BACKOFF_FIRST_MS;
          io.stderr.write(`codemode node: ${args.name} connected as ${paired.id} (${input.commands.join(', ')})\n`);
        } else if (message.event === 'removed') {
          io.stderr.write(`codemode node: ${args.name} was removed (DELETE /v1/nodes/${input.id ?? ''}); stopping\n`);
          return ExitCode.ok;
        } else if (message.event === 'invoke' && input.id !== undefined) {
          const invocation = NodeInvocationSchema.safeParse(JSON.parse(message.data));
          if (invocation.success) void serve(client, input.id, handlers, invocation.data);
        }
      }
      if (!io.signal.aborted) io.stderr.write('codemode node: connection closed; reconnecting\n');
    } catch (error) {
      if (io.signal.aborted) break;
      // A refusal that waiting will not change (bad name, refused key) ends the node.
      if (error instanceof CodeModeApiError && error.status !== 409 && error.status !== 429 && error.status < 500) throw error;
      io.stderr.write(`codemode node: ${error instanceof Error ? error.message : String(error)}; retrying in ${backoff} ms\n`);
    }
    await delay(backoff, io.signal);
    backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
  }
  return ExitCode.interrupted;
}

async function serve(client: CodeModeClient, nodeId: string, handlers: Map<string, NodeHandler>, call: NodeInvocation): Promise<void> {
  const handler = handlers.get(call.command);
  let result: { invocationId: string; ok: boolean; value?: unknown; error?: string };
  try {
    if (!handler) throw new Error(`command ${call.command} is not served by this node.`);
    result = { invocationId: call.invocationId, ok: true, value: await handler(call.params, { timeoutMs: call.timeoutMs }) };
  } catch (error) {
    result = { invocationId: call.invocationId, ok: false, error: (error instanceof Error ? error.message : String(error)).slice(0, 4096) };
  }
  for (let attempt = 1; attempt <= ANSWER_ATTEMPTS; attempt++) {
    try {
      await client.answerNode(nodeId, result);
      return;
    } catch (error) {
      if (error instanceof CodeModeApiError && error.status === 413 && result.ok) {
        result = { invocationId: call.invocationId, ok: false, error: `the result of ${call.command} is over the API's 1 MiB body limit.` };
        continue;
      }
      // 409: nobody waits for it any more (timed out, or the run ended); nothing to retry.
      if (error instanceof CodeModeApiError && error.status < 500 && error.status !== 429) return;
      await delay(BACKOFF_FIRST_MS * 2 ** attempt, undefined);
    }
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

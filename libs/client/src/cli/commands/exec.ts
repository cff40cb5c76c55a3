import type { ExitCodeValue } from '../exit-codes';
import type { CommandContext } from '../context';
import { CliInputError } from '../errors';
import { followResult } from './follow-result';

export interface ExecArgs {
  source: string;
  sessionId: string;
  title: string;
  follow: boolean;
}

/** `codemode exec <file|->`: runs the cell, then follows it to its end unless --no-wait. */
export async function execCommand(ctx: CommandContext, args: ExecArgs): Promise<ExitCodeValue> {
  const code = await readSource(ctx, args.source);
  const call = (signal: AbortSignal) => ctx.client.exec(args.sessionId, { title: args.title, code }, { signal });
  return followResult(ctx, args.sessionId, { label: `running ${args.title}`, call }, args.follow);
}

export interface WaitArgs {
  runId: string;
  sessionId: string;
  follow: boolean;
}

/** `codemode wait <runId>`: one `wait`, followed like exec's. */
export async function waitCommand(ctx: CommandContext, args: WaitArgs): Promise<ExitCodeValue> {
  const call = (signal: AbortSignal) => ctx.client.wait(args.sessionId, args.runId, { signal });
  return followResult(ctx, args.sessionId, { label: `waiting for ${args.runId}`, call }, args.follow);
}

async function readSource(ctx: CommandContext, source: string): Promise<string> {
  try {
    return source === '-' ? await ctx.io.readStdin() : await ctx.io.readFile(source);
  } catch (error) {
    throw new CliInputError(`cannot read ${source === '-' ? 'stdin' : source}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

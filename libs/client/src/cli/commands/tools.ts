import type { ClientToolInput, ToolsView } from '@codemode/contracts';
import { ExitCode, type ExitCodeValue } from '../exit-codes';
import type { CommandContext } from '../context';
import { CliInputError } from '../errors';
import { renderJson, renderTools } from '../output';

/** `codemode tools put <sid> <tools.json>`: the file holds `{"tools":[...]}` or the bare array. */
export async function toolsPutCommand(ctx: CommandContext, args: { sessionId: string; file: string }): Promise<ExitCodeValue> {
  const tools = parseToolsFile(args.file, await readFile(ctx, args.file));
  printTools(ctx, await ctx.client.putTools(args.sessionId, tools));
  return ExitCode.ok;
}

export async function toolsGetCommand(ctx: CommandContext, args: { sessionId: string }): Promise<ExitCodeValue> {
  printTools(ctx, await ctx.client.getTools(args.sessionId));
  return ExitCode.ok;
}

/** Only the outer shape is checked here; the API validates each tool and names the bad field. */
export function parseToolsFile(file: string, text: string): ClientToolInput[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliInputError(`${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (Array.isArray(parsed)) return parsed as ClientToolInput[];
  if (parsed !== null && typeof parsed === 'object' && Array.isArray((parsed as { tools?: unknown }).tools)) {
    return (parsed as { tools: ClientToolInput[] }).tools;
  }
  throw new CliInputError(`${file} must hold {"tools": [...]} or an array of tools.`);
}

function printTools(ctx: CommandContext, view: ToolsView): void {
  ctx.io.stdout.write(ctx.json ? renderJson(view) : renderTools(view));
}

async function readFile(ctx: CommandContext, file: string): Promise<string> {
  try {
    return await ctx.io.readFile(file);
  } catch (error) {
    throw new CliInputError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

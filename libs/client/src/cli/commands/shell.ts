import { exitCodeForShell, type ExitCodeValue } from '../exit-codes';
import type { CommandContext } from '../context';
import { renderJson, renderShell } from '../output';

export interface ShellArgs {
  sessionId: string;
  command: string;
  workdir: string | undefined;
  background: boolean;
  yieldMs: number | undefined;
}

/** `codemode shell <sid> -- <command...>`: 0 when it completed or was backgrounded, 1 when it failed. */
export async function shellCommand(ctx: CommandContext, args: ShellArgs): Promise<ExitCodeValue> {
  const answer = await ctx.client.shellExec(
    args.sessionId,
    {
      command: args.command,
      ...(args.workdir !== undefined ? { workdir: args.workdir } : {}),
      ...(args.background ? { background: true } : {}),
      ...(args.yieldMs !== undefined ? { yieldMs: args.yieldMs } : {}),
    },
    { signal: ctx.io.signal },
  );
  if (ctx.json) {
    ctx.io.stdout.write(renderJson(answer));
  } else {
    const rendered = renderShell(answer);
    ctx.io.stdout.write(rendered.stdout);
    ctx.io.stderr.write(rendered.stderr);
  }
  return exitCodeForShell(answer);
}

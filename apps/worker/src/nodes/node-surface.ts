import { NODE_COMMANDS, nodeErrors, type NodeView, type ShellAnswer, type ShellExecInput } from '@codemode/contracts';
import { NodeCallError, NodeCalls, NodeRegistry, nodeView, type AnswerInbox, type NodeRecord } from '@codemode/fleet';
import { SHELL_TEXTS } from '@codemode/shell';
import { ToolCallError } from '../tools/tool-call-error';

/** What a cell's handle of a node carries (SPEC §15 `nodes.get`). */
export interface NodeHandleView {
  id: string;
  name: string;
  commands: string[];
}

/**
 * The worker's side of paired nodes (SPEC §15): `nodes.list`, `nodes.get`, `nodes.invoke` and the
 * shell tool's `host: "node"` (§7). Errors are the guest-visible ones of SPEC, as ToolCallErrors.
 */
export class NodeSurface {
  constructor(
    private readonly registry: NodeRegistry,
    private readonly calls: NodeCalls,
    private readonly inbox: () => Promise<AnswerInbox>,
  ) {}

  async list(tenant: string): Promise<NodeView[]> {
    return (await this.registry.list(tenant)).map(nodeView);
  }

  async get(tenant: string, idOrName: unknown): Promise<NodeHandleView> {
    const node = await this.resolve(tenant, idOrName);
    return { id: node.id, name: node.name, commands: [...node.commands] };
  }

  /** `node.invoke(command, params?)`: the node's JSON answer, within `timeoutMs`. */
  async invoke(tenant: string, input: unknown, opts: { timeoutMs: number; signal: AbortSignal }): Promise<unknown> {
    const { node: idOrName, command, params } = (input ?? {}) as { node?: unknown; command?: unknown; params?: unknown };
    if (typeof command !== 'string' || command === '') throw new ToolCallError('node.invoke needs a command name.');
    // SPEC §15: system.run is the shell tool's (host: "node"), never a handle's.
    if (command === NODE_COMMANDS.run)
      throw new ToolCallError('system.run is not invoked on a node handle; use the exec tool with host: "node".');
    return this.call(tenant, await this.resolve(tenant, idOrName), command, params, opts);
  }

  /** The shell tool's `host: "node"` (SPEC §7): `system.run` on the node, in the foreground. */
  async shell(tenant: string, input: ShellExecInput, opts: { timeoutMs: number; signal: AbortSignal }): Promise<ShellAnswer> {
    if (input.background === true) return failed(nodeErrors.background);
    let node: NodeRecord;
    let answer: unknown;
    try {
      node = await this.resolve(tenant, input.node);
      answer = await this.call(tenant, node, NODE_COMMANDS.run, { command: input.command, workdir: input.workdir, env: input.env }, opts);
    } catch (error) {
      if (error instanceof ToolCallError) return failed(error.message);
      throw error;
    }
    const run = (answer ?? {}) as {
      exitCode?: unknown;
      signal?: unknown;
      timedOut?: unknown;
      stdout?: unknown;
      stderr?: unknown;
      durationMs?: unknown;
      cwd?: unknown;
    };
    if (run.timedOut === true) return failed(nodeErrors.background);
    const exitCode = typeof run.exitCode === 'number' ? run.exitCode : null;
    const aggregated = `${typeof run.stdout === 'string' ? run.stdout : ''}${typeof run.stderr === 'string' ? run.stderr : ''}`;
    const ok = exitCode === 0;
    const text = [
      aggregated.trimEnd() || SHELL_TEXTS.noOutput,
      ...(exitCode !== null && exitCode !== 0 ? [SHELL_TEXTS.exitedWithCode(exitCode)] : []),
    ].join('\n\n');
    return {
      text,
      details: {
        status: ok ? 'completed' : 'failed',
        exitCode,
        ...(typeof run.signal === 'string' ? { exitSignal: run.signal } : {}),
        aggregated,
        durationMs: typeof run.durationMs === 'number' ? run.durationMs : 0,
        cwd: typeof run.cwd === 'string' ? run.cwd : '',
      },
    };
  }

  private async resolve(tenant: string, idOrName: unknown): Promise<NodeRecord> {
    const key = typeof idOrName === 'string' ? idOrName : (JSON.stringify(idOrName) ?? '');
    const node = key === '' ? undefined : await this.registry.resolve(tenant, key);
    if (!node) throw new ToolCallError(nodeErrors.unknown(key));
    return node;
  }

  private async call(
    tenant: string,
    node: NodeRecord,
    command: string,
    params: unknown,
    opts: { timeoutMs: number; signal: AbortSignal },
  ): Promise<unknown> {
    if (!node.connected) throw new ToolCallError(nodeErrors.notConnected(node.name));
    if (!node.commands.includes(command)) throw new ToolCallError(nodeErrors.noCommand(node.name, command));
    try {
      return await this.calls.invoke(tenant, node, command, params, { ...opts, inbox: await this.inbox() });
    } catch (error) {
      if (error instanceof NodeCallError) throw new ToolCallError(error.message);
      throw error;
    }
  }
}

function failed(text: string): ShellAnswer {
  return { text, details: { status: 'failed' } };
}

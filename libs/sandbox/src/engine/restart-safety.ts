import { RepeatableCalls } from '@codemode/catalog';
import { RESTART_SAFE_NAMESPACE_MESSAGE, RESTART_SAFE_SURFACE_MESSAGE } from '@codemode/cells';
import { BridgeProtocolError } from '../errors';
import type { CellVm } from './cell-vm';
import type { Failure } from './guest-error';
import type { CellRunRequest } from './types';

/** Methods a restartSafe cell may always call (SPEC §5); `callValue` and `namespace` only for replay-safe or idempotent tools (§16) and replay-safe surfaces (§15). */
const REPLAY_SAFE_METHODS: ReadonlySet<string> = new Set(['search', 'describe', 'yield', 'sleep', 'api']);

/** Why a restartSafe cell's call was refused: an MCP/namespace call, or any other unsafe surface. */
type Refusal = 'namespace' | 'surface';

/**
 * SPEC §5, restartSafe cells: a call that is not replay-safe is never dispatched. The refusal is
 * recorded here (the guest cannot undo it: the VM is halted, and the run fails at the next check
 * whatever the guest catches); once refused, no later call of the run is dispatched either. As in
 * OpenClaw, the namespace message is used only when every refused call was a namespace call.
 */
export class RestartSafety {
  /** Set when a restartSafe cell called a surface that is not replay-safe: the run fails at the next check. */
  private refusal: Refusal | undefined;
  /** The tool calls the catalog lets a restartSafe cell make (the catalog is parsed only for restartSafe cells). */
  private readonly allowed: RepeatableCalls;

  constructor(
    private readonly cell: CellRunRequest,
    private readonly vm: CellVm,
  ) {
    this.allowed = RepeatableCalls.fromJson(cell.restartSafe ? cell.catalogJson : undefined);
  }

  /** A call of the run was refused: the run fails (with `failure`) at its next check. */
  get refused(): boolean {
    return this.refusal !== undefined;
  }

  /** Throws (into the guest) when the call, or an earlier one of a restartSafe cell, is refused. */
  check(method: string, argsJson: string): void {
    if (!this.cell.restartSafe) return;
    const refused = this.unsafeKind(method, argsJson);
    if (refused) {
      this.refusal = this.refusal === 'surface' || refused === 'surface' ? 'surface' : 'namespace';
      this.vm.halt();
    }
    if (this.refusal) throw new BridgeProtocolError(this.message());
  }

  /** OpenClaw: phase `bridge` once anything was dispatched in the run, else `input`. */
  failure(dispatched: boolean): Failure {
    return { code: 'invalid_input', phase: dispatched ? 'bridge' : 'input', error: this.message() };
  }

  private unsafeKind(method: string, argsJson: string): Refusal | undefined {
    if (REPLAY_SAFE_METHODS.has(method) || this.allowed.toolCall(method, argsOf(argsJson))) return undefined;
    return method === 'namespace' ? 'namespace' : 'surface';
  }

  private message(): string {
    return this.refusal === 'namespace' ? RESTART_SAFE_NAMESPACE_MESSAGE : RESTART_SAFE_SURFACE_MESSAGE;
  }
}

function argsOf(argsJson: string): unknown {
  try {
    return JSON.parse(argsJson) as unknown;
  } catch {
    return undefined;
  }
}

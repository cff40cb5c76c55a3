import { toolSettledData } from '@codemode/contracts';
import { mapMcpArguments } from '@codemode/catalog';
import type { BridgeCall } from '@codemode/cells';
import type { CallGate, ExternalSettlement } from '@codemode/sandbox';
import type { AppendInput } from '@codemode/events';
import type { SessionToolCatalog } from '@codemode/tools';
import type { WorkerMetrics } from '@codemode/telemetry';
import type { CallPolicy } from './call-policy';
import type { KindCall, ResolvedTool, ToolKind } from './kinds/tool-kind';
import type { RunEventWriter } from './run-event-writer';
import { ToolCallError } from './tool-call-error';
import { callKeyOf, type ToolRun } from './tool-run';

/** A call's tool, its kind (none: no kind of this worker makes it) and its input, as the guest's request named them. */
interface Resolved extends ResolvedTool {
  kind: ToolKind | undefined;
  input: unknown;
}

/** What the pipeline of one run works with. */
export interface PipelineParts {
  run: ToolRun;
  catalog: SessionToolCatalog;
  /** Every kind of tool call, in the registry's order (`toolKinds`). */
  kinds: readonly ToolKind[];
  policy: CallPolicy;
  events: RunEventWriter;
  metrics: Pick<WorkerMetrics, 'toolCalled'>;
  /** The run's telemetry counter of tool calls (SPEC §13 `callCount`). */
  counted: () => void;
  /** What is left of the current leg (ms, may be below 0). */
  legLeft: () => number;
}

/**
 * Every tool call of one run, whatever its kind (SPEC §4–§5, §11, §16): the tool is resolved
 * from the guest's request, the run's policy admits it (or blocks it, or waits for its approval),
 * `tool.called` is recorded with its call key, its kind makes it, and — when the worker answers
 * it — `tool.settled` is recorded before the guest sees the outcome (a call made here that
 * changes nothing has both recorded then, in one append). A replay-safe run's events carry the input and the
 * outcome as the guest sees it, so a replay answers the call from the log. A write refused at the
 * history cap stops the run (`RunEventWriter`).
 */
export class ToolCallPipeline {
  constructor(private readonly parts: PipelineParts) {}

  /**
   * A `callValue` the sandbox's bridge should take aside for the platform before it is
   * dispatched (its kind parks on the bridge, and the policy simply allows it): a call the policy
   * does not simply allow is dispatched first, to be blocked or approved.
   */
  handsToPlatform(call: BridgeCall): boolean {
    if (call.method !== 'callValue') return false;
    const entry = this.parts.catalog.byCallableName(argsOf(call).tool, this.parts.run);
    if (!entry) return false;
    const tool = { entry, run: this.parts.run, catalog: this.parts.catalog };
    return this.kindOf(tool)?.parksOnBridge?.(tool) === true && this.parts.policy.decisionFor(entry) === 'allow';
  }

  /** A `callValue` or `namespace` request, from its resolution to its outcome. */
  async call(call: BridgeCall, signal: AbortSignal, gate?: CallGate): Promise<unknown> {
    const { kind, input, ...tool } = call.method === 'namespace' ? this.resolveMcp(call) : this.resolveGlobal(call);
    this.parts.counted();
    if (!kind) throw new ToolCallError(`tool ${tool.entry.callableName} has no implementation on this worker.`);
    const handedOver = kind.parksOnBridge?.(tool) === true && this.parts.policy.decisionFor(tool.entry) === 'allow';
    const admitted = handedOver ? 'allow' : await this.parts.policy.admit(call, tool.entry, input, signal, gate);
    const budgetLeft = (): number => Math.max(0, this.parts.legLeft());
    const made: KindCall = { ...tool, call, input, signal, gate, handedOver, budgetLeft, callKey: callKeyOf(this.parts.run, call) };
    if (kind.answeredBy === 'platform') return this.toPlatform(kind, made);
    // A call an approval let through keeps the order of any call: its `tool.called` is the
    // approval acted on, in the log before the call runs.
    const recordedOnceAnswered =
      kind.inProcess === true &&
      admitted === 'allow' &&
      this.parts.catalog.repeatableCalls(this.parts.run).changesNothing(call.method, call.args);
    return this.answered(kind, made, recordedOnceAnswered);
  }

  /** `callId` waits in flight for the platform's answer (an `awaitResults` run's). */
  awaitsPlatform(callId: string): boolean {
    return this.parts.kinds.some((kind) => kind.awaits?.(callId) === true);
  }

  /** The platform's answer (already recorded as its `tool.settled`) to such a call; false when none waits for it. */
  settlePlatform(callId: string, outcome: ExternalSettlement): boolean {
    return this.parts.kinds.some((kind) => kind.settle?.(callId, outcome) === true);
  }

  private resolveGlobal(call: BridgeCall): Resolved {
    const args = argsOf(call);
    const entry = this.parts.catalog.byCallableName(args.tool, this.parts.run);
    if (!entry) throw new ToolCallError(`unknown tool ${String(args.tool)}; use catalog.search(query) to find tools.`);
    const tool = { entry, run: this.parts.run, catalog: this.parts.catalog };
    return { ...tool, kind: this.kindOf(tool), input: args.input ?? {} };
  }

  private resolveMcp(call: BridgeCall): Resolved {
    const args = argsOf(call);
    const entry = this.parts.catalog.mcpTool(args.server, args.tool);
    const tool = entry && { entry, run: this.parts.run, catalog: this.parts.catalog };
    const kind = tool && this.kindOf(tool);
    if (!tool || !kind) throw new ToolCallError(`MCP tool ${String(args.server)}.${String(args.tool)} is not available.`);
    return { ...tool, kind, input: mapMcpArguments(tool.entry.inputSchema, Array.isArray(args.args) ? args.args : []) };
  }

  private kindOf(tool: ResolvedTool): ToolKind | undefined {
    return this.parts.kinds.find((kind) => kind.handles(tool));
  }

  /**
   * Recorded as the platform's: it may answer as soon as `tool.called` is written, so the wait for
   * it starts before (its rejection is the caller's once the write is done, or nobody's if it fails).
   */
  private async toPlatform(kind: ToolKind, made: KindCall): Promise<unknown> {
    const answer = kind.call(made);
    answer.catch(() => undefined);
    try {
      await this.recordCalled(kind, made);
    } catch (error) {
      kind.withdraw?.(made.call.id);
      throw error;
    }
    return answer;
  }

  /**
   * `tool.called` before the call, `tool.settled` before the guest sees its outcome. A call made
   * in this process that changes nothing (`ToolKind.inProcess`, `RepeatableCalls.changesNothing`)
   * has both written once it answered, in one append, and its guest has the value without waiting
   * for that write, unless the run's trailed events pile up behind a slow Redis
   * (`RunEventWriter.trail`: every later write of the run, its park and its end come after it):
   * the order that protects a write protects nothing for it, and a call cut off before its events
   * landed (a crash, an abort) left nothing behind that a replay, or a run started again, does not
   * simply make again (SPEC §16).
   */
  private async answered(kind: ToolKind, made: KindCall, recordedOnceAnswered: boolean): Promise<unknown> {
    const { run, entry, call, signal } = made;
    const { events, metrics } = this.parts;
    // Asked in the same tick as `tool.settled`, such a call's `tool.called` goes in the same append.
    let called: Promise<void> | undefined;
    const recordCalled = () => (called ??= this.recordCalled(kind, made));
    if (recordedOnceAnswered) events.refuseIfStopped();
    else await recordCalled();
    const started = Date.now();
    const settler = () => ({ callId: call.id, tool: entry.callableName, durationMs: Date.now() - started });
    try {
      const value = await kind.call(made);
      metrics.toolCalled(entry.source, true, Date.now() - started);
      const data = toolSettledData(settler(), { ok: true, value }, run.restartSafe);
      const settled = { type: 'tool.settled' as const, runId: run.runId, epoch: run.epoch, data };
      if (recordedOnceAnswered) await events.trail([this.calledEvent(kind, made), settled]);
      else await events.append(settled);
      return value;
    } catch (error) {
      metrics.toolCalled(entry.source, false, Date.now() - started);
      // Cut off because the run was discarded (aborted, handed over): not the tool's outcome, so
      // not recorded as one; a replay makes the call again.
      if (signal.aborted) throw error;
      const message = error instanceof Error ? error.message : String(error);
      // The guest's rejection is {name, message} of the error (see RunBridge).
      const outcome = { ok: false, error: { name: error instanceof Error ? error.name : 'Error', message } } as const;
      const data = toolSettledData(settler(), outcome, run.restartSafe);
      // The guest sees the failure only once the log holds it: events that could not be written
      // (the cap, a Redis failure) are what the call rejects with, and stop the run as any
      // refused write does, so the run never ends `completed` without them.
      await Promise.all([recordCalled(), events.append({ type: 'tool.settled', runId: run.runId, epoch: run.epoch, data })]);
      throw error;
    }
  }

  private recordCalled(kind: ToolKind, made: KindCall): Promise<void> {
    return this.parts.events.append(this.calledEvent(kind, made));
  }

  /** `answeredBy: 'platform'`: POST …/tool-results checks answers against it. */
  private calledEvent(kind: ToolKind, made: KindCall): AppendInput {
    const { run, entry, call, input, callKey } = made;
    return {
      type: 'tool.called',
      runId: run.runId,
      epoch: run.epoch,
      data: {
        callId: call.id,
        tool: entry.callableName,
        source: entry.source,
        inputBytes: Buffer.byteLength(JSON.stringify(input) ?? 'null'),
        ...(kind.answeredBy === 'platform' ? { answeredBy: 'platform' } : {}),
        ...kind.called?.(made, input),
        ...(run.restartSafe ? { input } : {}),
        ...(callKey === undefined ? {} : { callKey }),
      },
    };
  }
}

/** A bridge request's args as an object (anything else reads as none). */
export function argsOf(call: BridgeCall): Record<string, unknown> {
  return typeof call.args === 'object' && call.args !== null && !Array.isArray(call.args) ? (call.args as Record<string, unknown>) : {};
}

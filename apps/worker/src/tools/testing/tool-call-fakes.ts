import type { ApprovalDecision, ClientTool, Policy } from '@codemode/contracts';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { mcpToolDefinition } from '@codemode/catalog';
import type { BridgeCall } from '@codemode/cells';
import {
  ApprovalClosedError,
  RunHistoryLimitError,
  type AppendInput,
  type ApprovalLedger,
  type ApprovalRequest,
  type EventLog,
  type StoredApproval,
} from '@codemode/events';
import type { CallGate } from '@codemode/sandbox';
import { WorkerMetrics } from '@codemode/telemetry';
import { SessionToolCatalog } from '@codemode/tools';
import { CallPolicy } from '../call-policy';
import type { ToolKind } from '../kinds/tool-kind';
import { RunEventWriter } from '../run-event-writer';
import { ToolCallPipeline } from '../tool-call-pipeline';
import type { ToolRun } from '../tool-run';

/** A run's event log in memory: what the run wrote, in order; `capAt` refuses the n-th write on as the history cap does. */
export class MemoryEventLog implements Pick<EventLog, 'append' | 'appendAll'> {
  readonly written: AppendInput[] = [];
  /** The script calls the writes took, each the event types it carried. */
  readonly calls: string[][] = [];
  capAt = Infinity;
  /** Set: every write rejects with it (Redis unavailable, say), nothing written. */
  failWith: Error | undefined;
  /** Writes wait for this before they land (`holdWrites`). */
  private gate: Promise<void> = Promise.resolve();

  append(ref: unknown, input: AppendInput): Promise<{ eventId: string }> {
    this.calls.push([input.type]);
    return this.write(ref, input);
  }

  /** The trail marks left on the run: an append's mark once every event of it was written (append-events.lua). */
  readonly marks: string[] = [];

  async appendAll(
    ref: unknown,
    inputs: readonly AppendInput[],
    trailMark?: string,
  ): Promise<Array<{ eventId: string } | RunHistoryLimitError>> {
    this.calls.push(inputs.map((input) => input.type));
    const outcomes = await Promise.all(inputs.map((input) => this.write(ref, input).catch((error: RunHistoryLimitError) => error)));
    if (trailMark !== undefined && outcomes.every((outcome) => !(outcome instanceof Error))) this.marks.push(trailMark);
    return outcomes;
  }

  /** Holds every write from now on until the returned function is called (a slow Redis). */
  holdWrites(): () => void {
    let release = (): void => undefined;
    this.gate = new Promise((resolve) => (release = resolve));
    return release;
  }

  private async write(_ref: unknown, input: AppendInput): Promise<{ eventId: string }> {
    await this.gate;
    if (this.failWith) throw this.failWith;
    if (this.written.length >= this.capAt) throw new RunHistoryLimitError(input.runId ?? '', this.written.length, 0);
    this.written.push(input);
    return { eventId: `${this.written.length}-0` };
  }

  types(): string[] {
    return this.written.map((event) => event.type);
  }

  dataOf(type: string): unknown[] {
    return this.written.filter((event) => event.type === type).map((event) => event.data);
  }
}

/**
 * Approvals as the ledger keeps them, in memory: `decided` answers a new approval at once;
 * `decide` is an operator's (or the timeout's) decision later; `voided` closes every approval as
 * a run that ended does.
 */
export class MemoryApprovals {
  readonly byId = new Map<string, StoredApproval>();
  decided: ApprovalDecision | undefined;
  voided = false;

  forCall(_ref: unknown, runId: string, callId: string): Promise<StoredApproval | null> {
    return Promise.resolve([...this.byId.values()].find((a) => a.runId === runId && a.callId === callId) ?? null);
  }

  request(_ref: unknown, req: ApprovalRequest): Promise<StoredApproval> {
    const approval = {
      ...req,
      requestedAt: new Date().toISOString(),
      ...(this.decided ? { decision: this.decided } : {}),
    } as StoredApproval;
    this.byId.set(approval.approvalId, approval);
    return Promise.resolve(approval);
  }

  get(_ref: unknown, approvalId: string): Promise<StoredApproval | null> {
    return Promise.resolve(this.byId.get(approvalId) ?? null);
  }

  decide(_ref: unknown, approvalId: string, decision: Omit<ApprovalDecision, 'decidedAt'>): Promise<StoredApproval> {
    const approval = this.byId.get(approvalId);
    if (!approval) return Promise.reject(new Error(`no approval ${approvalId}`));
    if (this.voided) return Promise.reject(new ApprovalClosedError(approvalId, 'voided'));
    if (approval.decision) return Promise.reject(new ApprovalClosedError(approvalId, 'decided'));
    const decided = { ...approval, decision: { ...decision, decidedAt: new Date().toISOString() } } as StoredApproval;
    this.byId.set(approvalId, decided);
    return Promise.resolve(decided);
  }

  get requested(): StoredApproval[] {
    return [...this.byId.values()];
  }
}

export const RUN: ToolRun = {
  ref: { tenant: 'acme', sessionId: 'sess_1' },
  runId: 'run_1',
  epoch: 3,
  limits: { ...SPEC_DEFAULT_LIMITS },
  shell: {} as ToolRun['shell'],
  agentId: null,
  awaitResults: false,
  agents: true,
  restartSafe: false,
};

/** A session with a webhook client tool, one without endpoint, and one MCP server's tool. */
export function sessionCatalog(clientTools: ClientTool[] = CLIENT_TOOLS): SessionToolCatalog {
  const mcp = mcpToolDefinition({
    serverName: 'tracker',
    toolName: 'create_issue',
    description: 'Creates an issue.',
    inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  });
  return new SessionToolCatalog([mcp], clientTools, [{ name: 'tracker' }], RUN.ref.tenant);
}

export const CLIENT_TOOLS: ClientTool[] = [
  { name: 'refund', description: 'Refunds an order.', inputSchema: { type: 'object' }, endpoint: 'https://hooks.example.com/refund' },
  { name: 'ask_user', description: 'Asks the user.', inputSchema: { type: 'object' } },
];

/** A call the sandbox numbered `n` (its callKey is `<runId>:<n>`). */
export function callOf(id: string, method: BridgeCall['method'], args: unknown, callNumber?: number): BridgeCall {
  return callNumber === undefined ? { id, method, args } : { id, method, args, callNumber };
}

/** A gate that notes what the host did with the call. */
export function recordingGate(): CallGate & { moves: string[] } {
  const moves: string[] = [];
  return {
    moves,
    hold: () => moves.push('hold'),
    resume: () => {
      moves.push('resume');
      return Promise.resolve();
    },
    handToPlatform: () => moves.push('handToPlatform'),
  };
}

/** One run's pipeline over the fakes above, as `RunToolHost` assembles it. */
export function pipelineOver(
  kinds: readonly ToolKind[],
  options: { run?: ToolRun; policy?: Policy; catalog?: SessionToolCatalog; legLeftMs?: number; approvalTimeoutMs?: number } = {},
) {
  const run = options.run ?? RUN;
  const catalog = options.catalog ?? sessionCatalog();
  const log = new MemoryEventLog();
  const approvals = new MemoryApprovals();
  const metrics = new WorkerMetrics('test');
  const stopped: string[] = [];
  const notices: string[] = [];
  const events = new RunEventWriter(log, run, () => stopped.push(run.runId));
  const policy = new CallPolicy(options.policy ?? { rules: [] }, run, {
    approvals: approvals as unknown as ApprovalLedger,
    metrics,
    approvalTimeoutMs: options.approvalTimeoutMs ?? 60_000,
    requested: (approval) => notices.push(approval.approvalId),
    endpointOf: (entry) => (entry.source === 'client' ? catalog.clientTools.get(entry.toolName)?.endpoint : undefined),
    append: (type, data) => events.append({ type, runId: run.runId, epoch: run.epoch, data }),
    readyToWrite: () => events.readyToWrite(),
  });
  let calls = 0;
  const pipeline = new ToolCallPipeline({
    run,
    catalog,
    kinds,
    policy,
    events,
    metrics,
    counted: () => (calls += 1),
    legLeft: () => options.legLeftMs ?? 30_000,
  });
  return { pipeline, policy, log, approvals, notices, events, stopped, metrics, catalog, callCount: () => calls };
}

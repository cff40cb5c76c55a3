import { randomUUID } from 'node:crypto';
import {
  APPROVAL_TIMED_OUT_REASON,
  toolBlockedMessage,
  toolDeniedMessage,
  type ApprovalDecision,
  type EventData,
  type Policy,
  type PolicyDecision,
} from '@codemode/contracts';
import type { CatalogEntry } from '@codemode/catalog';
import { ApprovalClosedError, type ApprovalLedger, type StoredApproval } from '@codemode/events';
import type { CallGate } from '@codemode/sandbox';
import type { BridgeCall } from '@codemode/cells';
import type { WorkerMetrics } from '@codemode/telemetry';
import { decideTool, policyName } from '@codemode/tools';
import type { ToolRun } from './tool-run';
import { CANCELED_MESSAGE, ToolCallError } from './tool-call-error';

/**
 * How often a waiting call looks for its decision in Redis: soon at first (an automated approver
 * answers in milliseconds), then less and less often, so a fleet holding many calls that wait on
 * people reads Redis about once per call every DECISION_POLL_MAX_MS.
 */
const DECISION_POLL_FIRST_MS = 100;
const DECISION_POLL_MAX_MS = 2000;

/** Why an approved call is not dispatched after all: the tool's endpoint is not the one its approval showed. */
const ENDPOINT_CHANGED_REASON = 'its endpoint changed after the approval was requested';

/** What the policy check of one run needs from the worker. */
export interface CallPolicyDeps {
  approvals: ApprovalLedger;
  metrics: WorkerMetrics;
  /** CODEMODE_APPROVAL_TIMEOUT_SECONDS in ms. */
  approvalTimeoutMs: number;
  /** Appends a run event (history cap and fencing handled by the caller). */
  append: (type: 'tool.blocked', data: EventData<'tool.blocked'>) => Promise<void>;
  /** Resolves once the run's earlier reads' events landed, before an approval is written (RunEventWriter.readyToWrite). */
  readyToWrite: () => Promise<void>;
  /** Called once per new approval (the optional approval webhook). */
  requested: (approval: StoredApproval) => void;
  /** Where a call of `entry` goes: a client tool's webhook endpoint, shown on its approval card (SPEC §11). */
  endpointOf: (entry: CatalogEntry) => string | undefined;
}

/**
 * The tool policy of one run (SPEC §11), checked for every tool call a cell makes before it is
 * dispatched: `allow` passes; `deny` records `tool.blocked` and rejects; `approve` records
 * `approval.requested` (once per call: a run resumed or replayed elsewhere finds its approval and
 * any decision in the log), steps the call aside (`CallGate.hold`: no in-flight slot, and the run's
 * budget clock stops once nothing else is unsettled) and waits for the decision. Approved calls
 * take a slot again before they are dispatched; denied ones reject with the reason.
 */
export class CallPolicy {
  /** A read of the current policy in progress: calls admitted meanwhile wait for it. */
  private reloading: Promise<void> | undefined;

  constructor(
    private policy: Policy,
    private readonly run: ToolRun,
    private readonly deps: CallPolicyDeps,
  ) {}

  decisionFor(entry: CatalogEntry): PolicyDecision {
    return decideTool(this.policy, policyName(entry));
  }

  /** Reads the policy again; until the read lands, `admit` waits for it. A failed read keeps the last one. */
  reload(read: () => Promise<Policy>): void {
    this.reloading = read().then(
      (policy) => {
        this.policy = policy;
      },
      () => undefined,
    );
  }

  /**
   * Resolves when the call may be dispatched, with how it was admitted: `allow` (the policy lets it
   * through) or `approve` (an approval was asked for and given).
   * @throws ToolCallError when it is blocked or denied
   */
  async admit(
    call: BridgeCall,
    entry: CatalogEntry,
    input: unknown,
    signal: AbortSignal,
    gate: CallGate | undefined,
  ): Promise<'allow' | 'approve'> {
    if (this.reloading) await this.reloading;
    const tool = policyName(entry);
    const decision = decideTool(this.policy, tool);
    if (decision === 'allow') return decision;
    if (decision === 'deny') {
      this.deps.metrics.toolCallsBlockedTotal.inc();
      await this.deps.append('tool.blocked', { callId: call.id, tool });
      throw new ToolCallError(toolBlockedMessage(tool));
    }
    const endpoint = this.deps.endpointOf(entry);
    const approval = await this.approvalOf(call, tool, input, endpoint);
    // Decided already (a resumed or replayed run): applied at once, the call never steps aside.
    const outcome = approval.decision ?? (await this.awaitDecision(approval, signal, gate));
    if (outcome.decision === 'deny') throw new ToolCallError(toolDeniedMessage(tool, outcome.reason));
    // A run resumed elsewhere reads the session's tools again: an approval is for the endpoint it showed.
    if (approval.endpoint !== endpoint) throw new ToolCallError(toolDeniedMessage(tool, ENDPOINT_CHANGED_REASON));
    return decision;
  }

  /** The call's approval: the one recorded before (resumed or replayed run), else a new one. */
  private async approvalOf(call: BridgeCall, tool: string, input: unknown, endpoint: string | undefined): Promise<StoredApproval> {
    const { ref, runId, epoch } = this.run;
    const earlier = await this.deps.approvals.forCall(ref, runId, call.id);
    if (earlier) return earlier;
    await this.deps.readyToWrite();
    const approval = await this.deps.approvals.request(ref, {
      approvalId: `ap_${randomUUID()}`,
      runId,
      epoch,
      callId: call.id,
      tool,
      input,
      endpoint,
    });
    this.deps.requested(approval);
    return approval;
  }

  /**
   * Waits, with the call stepped aside, until the approval is decided in Redis (by an operator, or
   * here once CODEMODE_APPROVAL_TIMEOUT_SECONDS have passed since it was requested).
   */
  private async awaitDecision(approval: StoredApproval, signal: AbortSignal, gate: CallGate | undefined): Promise<ApprovalDecision> {
    const { metrics, approvals } = this.deps;
    const due = Date.parse(approval.requestedAt) + this.deps.approvalTimeoutMs;
    gate?.hold();
    metrics.approvalsPending.inc();
    let pollMs = DECISION_POLL_FIRST_MS;
    try {
      for (;;) {
        if (signal.aborted) throw signal.reason ?? new ToolCallError('the run ended while the call waited for its approval.');
        const current = await approvals.get(this.run.ref, approval.approvalId);
        if (current?.decision) {
          metrics.approvalDecided(current.decision.timedOut === true ? 'timeout' : current.decision.decision);
          // Approved: the call takes an in-flight slot again before it is dispatched.
          if (current.decision.decision === 'approve') await gate?.resume();
          // The run ended or left this worker while the call waited: nothing may be dispatched.
          if (signal.aborted) throw new ToolCallError(CANCELED_MESSAGE);
          return current.decision;
        }
        if (Date.now() >= due) await this.timeOut(approval);
        else {
          await pause(Math.min(pollMs, due - Date.now()), signal);
          pollMs = Math.min(pollMs * 2, DECISION_POLL_MAX_MS);
        }
      }
    } finally {
      metrics.approvalsPending.dec();
    }
  }

  /** Denies the approval as timed out; losing the race to an operator's decision is fine (the loop reads it). */
  private async timeOut(approval: StoredApproval): Promise<void> {
    await this.deps.readyToWrite();
    try {
      await this.deps.approvals.decide(this.run.ref, approval.approvalId, {
        decision: 'deny',
        reason: APPROVAL_TIMED_OUT_REASON,
        timedOut: true,
      });
    } catch (error) {
      if (!(error instanceof ApprovalClosedError)) throw error;
      // Void: the run ended (expired, aborted, lost) while the call waited.
      if (error.why === 'voided') throw new ToolCallError(CANCELED_MESSAGE);
    }
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, Math.max(1, ms));
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

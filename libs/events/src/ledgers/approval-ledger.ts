import {
  APPROVAL_TIMED_OUT_REASON,
  ApprovalDecisionSchema,
  ApprovalViewSchema,
  isEndedStatus,
  type ApprovalDecision,
  type ApprovalView,
  type EventData,
  type SessionRef,
  type TenantApprovalView,
} from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import { ApprovalClosedError, ApprovalNotFoundError, StoreCommandError } from '../platform/errors';
import { encodeEvent, rawsAndFactsArgs } from '../log/event-encoding';
import type { KeySpace } from '../platform/keys';
import { checkReply, toRunStatus } from '../platform/lua-errors';
import { guard } from '../platform/redis';
import { DEFAULT_EVENTS_SCRIPT_SETTINGS, ScriptLoader } from '../platform/script-loader';

const DECISION_SUFFIX = ':decision';
/** Field of the approvals hash naming the one approval of a call: `call:<runId>:<callId>` → approvalId. */
const CALL_FIELD_PREFIX = 'call:';
const UNKNOWN_APPROVAL = -10;
const ALREADY_DECIDED = -11;
const RUN_ENDED = -2;

/** An approval with its decision, once it has one. */
export type StoredApproval = ApprovalView & { decision?: ApprovalDecision };

/** What a worker records when a call needs approval. */
export interface ApprovalRequest {
  approvalId: string;
  runId: string;
  /** The requesting worker's epoch: the write is fenced like every run write. */
  epoch: number;
  callId: string;
  /** The call's policy name (SPEC §11). */
  tool: string;
  input: unknown;
  /** A client tool's webhook endpoint, shown with the approval (SPEC §11); absent for other tools. */
  endpoint?: string;
}

/**
 * Approvals of tool calls (SPEC §11). Each is requested by the worker running the call
 * (`approval.requested`, fenced by its epoch) and decided once, by an operator or by the timeout
 * (`approval.decided`, at the run's epoch of the moment); both are events, so a worker that
 * resumes or replays a run finds its approvals and decisions in the log and in this projection.
 * A run that ended voids its undecided approvals: they are no longer listed or decidable.
 */
export class ApprovalLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts = ScriptLoader.default(),
  ) {}

  /** Appends `approval.requested` and stores the approval; answers it as listed. */
  async request(ref: SessionRef, req: ApprovalRequest): Promise<ApprovalView> {
    const view: ApprovalView = {
      approvalId: req.approvalId,
      runId: req.runId,
      callId: req.callId,
      tool: req.tool,
      input: req.input ?? null,
      ...(req.endpoint === undefined ? {} : { endpoint: req.endpoint }),
      requestedAt: new Date().toISOString(),
    };
    const ev = encodeEvent('approval.requested', {
      approvalId: req.approvalId,
      runId: req.runId,
      callId: req.callId,
      tool: req.tool,
      input: view.input,
      ...(req.endpoint === undefined ? {} : { endpoint: req.endpoint }),
    });
    const keys = [...this.keys.scriptKeys(ref, req.runId), this.keys.approvals(ref)];
    const args = [req.runId, req.epoch, ev.head, req.approvalId, JSON.stringify(view), req.callId, ...rawsAndFactsArgs(ev)];
    const raw = await guard(() => this.scripts.run(this.redis, 'request-approval', keys, args));
    checkReply(raw, { runId: req.runId, epoch: req.epoch, type: 'approval.requested' });
    // Best effort, outside the session's slot: only the tenant-wide listing reads it.
    const sessions = this.keys.tenantApprovalSessions(ref.tenant);
    await guard(() => this.redis.multi().sadd(sessions, ref.sessionId).pexpire(sessions, this.sessionTtlMs()).exec()).catch(
      () => undefined,
    );
    return view;
  }

  /**
   * Records `decision` on a pending approval. With `timeoutMs` (an operator's decision), an
   * approval older than that is denied as timed out instead, whoever holds its run: the timeout
   * holds even while no worker is watching the approval (its run evicted, or its worker gone).
   * @throws ApprovalNotFoundError (404), ApprovalClosedError (409: already decided, timed out, or its run ended)
   */
  async decide(
    ref: SessionRef,
    approvalId: string,
    decision: Omit<ApprovalDecision, 'decidedAt'>,
    opts: { timeoutMs?: number } = {},
  ): Promise<StoredApproval> {
    const approval = await this.get(ref, approvalId);
    if (!approval) throw new ApprovalNotFoundError(approvalId);
    if (approval.decision) throw new ApprovalClosedError(approvalId, 'decided');
    if (opts.timeoutMs !== undefined && Date.now() >= Date.parse(approval.requestedAt) + opts.timeoutMs) {
      await this.decide(ref, approvalId, { decision: 'deny', reason: APPROVAL_TIMED_OUT_REASON, timedOut: true });
      throw new ApprovalClosedError(approvalId, 'timed_out');
    }
    const recorded: ApprovalDecision = { ...decision, decidedAt: new Date().toISOString() };
    const data: EventData<'approval.decided'> = {
      approvalId,
      runId: approval.runId,
      callId: approval.callId,
      tool: approval.tool,
      ...recorded,
    };
    const keys = [...this.keys.scriptKeys(ref, approval.runId), this.keys.approvals(ref)];
    const args = [approvalId, approval.runId, JSON.stringify(data), JSON.stringify(recorded)];
    const raw = await guard(() => this.scripts.run(this.redis, 'decide-approval', keys, args));
    const code = Array.isArray(raw) ? (raw[0] as unknown) : undefined;
    if (code === UNKNOWN_APPROVAL) throw new ApprovalNotFoundError(approvalId);
    if (code === ALREADY_DECIDED) throw new ApprovalClosedError(approvalId, 'decided');
    if (code === RUN_ENDED) throw new ApprovalClosedError(approvalId, 'voided');
    checkReply(raw, { runId: approval.runId, type: 'approval.decided' });
    return { ...approval, decision: recorded };
  }

  /** One approval of the session with its decision, or null. */
  async get(ref: SessionRef, approvalId: string): Promise<StoredApproval | null> {
    const [record, decision] = await guard(() => this.redis.hmget(this.keys.approvals(ref), approvalId, approvalId + DECISION_SUFFIX));
    return record === null ? null : toStored(record, decision);
  }

  /** The approval of one call of a run (a run resumed or replayed elsewhere asks for it again), or null. */
  async forCall(ref: SessionRef, runId: string, callId: string): Promise<StoredApproval | null> {
    const approvalId = await guard(() => this.redis.hget(this.keys.approvals(ref), `${CALL_FIELD_PREFIX}${runId}:${callId}`));
    return approvalId === null ? null : this.get(ref, approvalId);
  }

  /** Every approval of one run, requested first first. */
  async ofRun(ref: SessionRef, runId: string): Promise<StoredApproval[]> {
    return (await this.all(ref)).filter((a) => a.runId === runId);
  }

  /** The session's undecided approvals of runs that have not ended, oldest first. */
  async pending(ref: SessionRef): Promise<ApprovalView[]> {
    const open = (await this.all(ref)).filter((a) => !a.decision);
    const runIds = [...new Set(open.map((a) => a.runId))];
    if (runIds.length === 0) return [];
    const statuses = await guard(() => Promise.all(runIds.map((runId) => this.redis.hget(this.keys.run(ref, runId), 'status'))));
    const live = new Set(
      runIds.filter((_, i) => {
        const status = toRunStatus(statuses[i]);
        return status !== null && !isEndedStatus(status);
      }),
    );
    return open.filter((a) => live.has(a.runId)).map(({ decision: _decision, ...view }) => view);
  }

  /** `GET /v1/approvals`: the pending approvals of every session of the tenant, oldest first. */
  async pendingOfTenant(tenant: string): Promise<TenantApprovalView[]> {
    const index = this.keys.tenantApprovalSessions(tenant);
    const sessionIds = await guard(() => this.redis.smembers(index));
    // Sessions are read side by side: their commands share round trips instead of queueing.
    const perSession = await Promise.all(
      sessionIds.map(async (sessionId): Promise<TenantApprovalView[]> => {
        const ref = { tenant, sessionId };
        if ((await guard(() => this.redis.exists(this.keys.approvals(ref)))) === 0) {
          // The session expired: its approvals went with it.
          await guard(() => this.redis.srem(index, sessionId));
          return [];
        }
        return (await this.pending(ref)).map((a) => ({ ...a, sessionId }));
      }),
    );
    return perSession.flat().sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  }

  private async all(ref: SessionRef): Promise<StoredApproval[]> {
    const fields = await guard(() => this.redis.hgetall(this.keys.approvals(ref)));
    const approvals: StoredApproval[] = [];
    for (const [field, record] of Object.entries(fields)) {
      if (!field.endsWith(DECISION_SUFFIX) && !field.startsWith(CALL_FIELD_PREFIX)) {
        approvals.push(toStored(record, fields[field + DECISION_SUFFIX] ?? null));
      }
    }
    return approvals.sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  }

  /** The tenant index lives at least as long as the sessions it names. */
  private sessionTtlMs(): number {
    return this.scripts.defined('SESSION_TTL_MS') ?? DEFAULT_EVENTS_SCRIPT_SETTINGS.sessionTtlSeconds * 1000;
  }
}

function toStored(record: string, decision: string | null): StoredApproval {
  const view = ApprovalViewSchema.safeParse(JSON.parse(record));
  if (!view.success) throw new StoreCommandError('stored approval does not parse');
  if (decision === null) return view.data;
  const parsed = ApprovalDecisionSchema.safeParse(JSON.parse(decision));
  if (!parsed.success) throw new StoreCommandError('stored approval decision does not parse');
  return { ...view.data, decision: parsed.data };
}

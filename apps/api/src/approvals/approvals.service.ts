import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import {
  APPROVAL_ID_PATTERN,
  ApprovalDecisionInputSchema,
  type ApprovalView,
  type SessionRef,
  type TenantApprovalView,
} from '@codemode/contracts';
import { ApprovalClosedError, ApprovalLedger, ApprovalNotFoundError, EventLog } from '@codemode/events';
import { ConflictApiException, InvalidInputException, NotFoundApiException } from '../http/api-errors';
import { APP_CONFIG } from '../core/tokens';

/** Pending approvals and their decisions over REST (SPEC §11). */
@Injectable()
export class ApprovalsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly approvals: ApprovalLedger,
    private readonly events: EventLog,
  ) {}

  async pending(ref: SessionRef): Promise<{ approvals: ApprovalView[] }> {
    if (!(await this.events.exists(ref))) throw new NotFoundApiException(`session ${ref.sessionId} not found.`);
    return { approvals: await this.approvals.pending(ref) };
  }

  async pendingOfTenant(tenant: string): Promise<{ approvals: TenantApprovalView[] }> {
    return { approvals: await this.approvals.pendingOfTenant(tenant) };
  }

  /** 200 once `approval.decided` is in the log; 404 unknown, 409 already decided, timed out, or void (its run ended). */
  async decide(
    ref: SessionRef,
    approvalId: string,
    body: Record<string, unknown>,
  ): Promise<ApprovalView & { decision: string; reason?: string }> {
    const parsed = ApprovalDecisionInputSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.map(String).join('.') || 'body';
      throw new InvalidInputException(`${field}: ${issue.message}`, { field });
    }
    if (!APPROVAL_ID_PATTERN.test(approvalId)) throw new NotFoundApiException(`approval ${approvalId} not found.`);
    try {
      const { decision, ...approval } = await this.approvals.decide(ref, approvalId, parsed.data, {
        timeoutMs: this.config.approvalTimeoutSeconds * 1000,
      });
      return {
        ...approval,
        decision: decision?.decision ?? parsed.data.decision,
        ...(parsed.data.reason === undefined ? {} : { reason: parsed.data.reason }),
      };
    } catch (error) {
      if (error instanceof ApprovalNotFoundError) throw new NotFoundApiException(error.message);
      if (error instanceof ApprovalClosedError) throw new ConflictApiException(error.message, { reason: error.why });
      throw error;
    }
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { ApprovalLedger } from '@codemode/events';
import { APP_CONFIG } from '../core/tokens';

/** How long past its timeout an undecided approval still holds a reply open (the worker decides it then). */
const TIMEOUT_SLACK_MS = 10_000;

/**
 * Tells the exec/wait reply deadline whether a run's budget clock may have stopped (SPEC §11): the
 * HTTP call stays open while the run waits for an approval, and counts the budget again from the
 * decision. Bounded by the approval timeout, so a reply whose worker died while waiting still ends.
 */
@Injectable()
export class ApprovalHold {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly approvals: ApprovalLedger,
  ) {}

  /** The run has an approval pending (not yet past its timeout), or one decided since `sinceMs`. */
  async holdsRun(ref: SessionRef, runId: string, sinceMs: number): Promise<boolean> {
    const now = Date.now();
    const timeoutMs = this.config.approvalTimeoutSeconds * 1000 + TIMEOUT_SLACK_MS;
    return (await this.approvals.ofRun(ref, runId)).some((approval) =>
      approval.decision ? Date.parse(approval.decision.decidedAt) >= sinceMs : Date.parse(approval.requestedAt) + timeoutMs > now,
    );
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import type { StoredApproval } from '@codemode/events';
import { postApprovalRequested } from '@codemode/tools';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/** SPEC §11: `CODEMODE_APPROVAL_WEBHOOK`, when set, hears of every new approval; a failure is only logged. */
@Injectable()
export class ApprovalNotices {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  requested(ref: SessionRef, approval: StoredApproval): void {
    const url = this.config.approvalWebhook;
    if (url === null) return;
    const body = { type: 'approval.requested' as const, tenant: ref.tenant, sessionId: ref.sessionId, ...approval };
    postApprovalRequested(url, body, this.config.webhookSecrets.get(ref.tenant)).catch((error: unknown) =>
      this.logger.warn(
        { tenant: ref.tenant, sessionId: ref.sessionId, approvalId: approval.approvalId, err: error },
        'approval webhook not delivered',
      ),
    );
  }
}

import { Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import type { ApprovalView, SessionRef, TenantApprovalView } from '@codemode/contracts';
import { JsonBody, requireObjectBody, requireOperator, Session, Tenant } from '../http/request-params';
import type { ApiRequest, ParsedBody } from '../http/request-context';
import { ApprovalsService } from './approvals.service';

/** Approvals of tool calls (SPEC §11): listing for any key, decisions for operator keys only. */
@Controller('v1')
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  @Get('approvals')
  ofTenant(@Tenant() tenant: string): Promise<{ approvals: TenantApprovalView[] }> {
    return this.approvals.pendingOfTenant(tenant);
  }

  @Get('sessions/:sid/approvals')
  ofSession(@Session() ref: SessionRef): Promise<{ approvals: ApprovalView[] }> {
    return this.approvals.pending(ref);
  }

  @Post('sessions/:sid/approvals/:approvalId')
  @HttpCode(200)
  decide(
    @Session() ref: SessionRef,
    @Param('approvalId') approvalId: string,
    @Req() req: ApiRequest,
    @JsonBody() body: ParsedBody,
  ): Promise<ApprovalView & { decision: string; reason?: string }> {
    requireOperator(req, 'decide approvals');
    return this.approvals.decide(ref, approvalId, requireObjectBody(body));
  }
}

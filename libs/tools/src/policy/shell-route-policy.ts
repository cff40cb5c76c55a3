import { toolBlockedMessage, toolNeedsCellApprovalMessage, type Policy } from '@codemode/contracts';
import { decideTool } from './policy-matcher';

/**
 * Why an agent key's call of the REST `shell/exec` or `process` route is refused (SPEC §11), or
 * null when `policy` (the session's effective one, as cells run under it) allows the tool. The
 * route has no operator to wait for, so `approve` refuses as well, pointing at a cell.
 */
export function shellRouteRefusal(policy: Policy, tool: 'exec' | 'process'): string | null {
  const decision = decideTool(policy, tool);
  if (decision === 'deny') return toolBlockedMessage(tool);
  if (decision === 'approve') return toolNeedsCellApprovalMessage(tool);
  return null;
}

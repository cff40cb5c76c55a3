/** The session's and tenant's other ledgers: session settings, tools, skills, approvals, the store, stored bytes, policy. */
export { SessionLedger, type SessionPatch, type SessionSettingsAt } from './session-ledger';
export { StoreLedger, type StoreWrites, type StoreCommitInput, type StoreCommitOutcome } from './store-ledger';
export { ClientToolsLedger, type ClientToolsRead } from './client-tools-ledger';
export { shadowed, SkillLedger, type SkillSet, type TenantSkillPut } from './skill-ledger';
export { PolicyStore } from './policy-store';
export { TenantToolsLedger, type TenantToolPut, type TenantToolsRead } from './tenant-tools-ledger';
export { ApprovalLedger, type ApprovalRequest, type StoredApproval } from './approval-ledger';
export { StoredBytesLedger, type SessionMeasure } from './stored-bytes-ledger';
export { SessionRemoval } from './session-removal';
export { publishWorkspaceRemoval, WorkspaceRemovals } from './workspace-removals';

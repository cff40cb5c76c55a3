export * from './errors';
export { KeySpace, type SessionScriptKeys } from './keys';
export { EventLog, MAX_PAGE, type AppendInput } from './event-log';
export { SessionLedger, type SessionPatch, type SessionSettingsAt } from './session-ledger';
export { RunLedger, IDEMPOTENCY_TTL_SECONDS, type FinishType, type RunRequestedData } from './run-ledger';
export { RunReplies, publishAnswer, publishStarted, resultReply } from './run-replies';
export { WorkerPresence } from './worker-presence';
export { RunOwnership, pastExpiry, type LocalRunHolder, type OwnedRun, type RunFate } from './run-ownership';
export { DeploymentCatalog } from './deployment-catalog';
export {
  createRedis,
  closeConnection,
  duplicateForBlocking,
  waitUntilReady,
  toStoreError,
  isStoreUnavailable,
  guard,
  execMulti,
  type CreateRedisOptions,
} from './redis';
export { StoreLedger, type StoreWrites, type StoreCommitInput, type StoreCommitOutcome } from './store-ledger';
export { ClientToolsLedger } from './client-tools-ledger';
export { ScriptLoader, SCRIPT_NAMES, type ScriptName } from './script-loader';
export { retryWhileStoreUnavailable, type StoreRetryOptions } from './store-retry';
export { ParkedRunIndex, type DueParkedRun } from './parked-run-index';
export { ParkedImageStore, type StoredParkedImage } from './parked-image-store';
export { NotAwaitingPlatformError, recordPlatformAnswers } from './platform-answers';
export { DEFAULT_EVENTS_SCRIPT_SETTINGS, type EventsScriptSettings } from './script-loader';
export { type LoggedEvent } from './event-encoding';
export { type SessionRecord, type SessionSettings } from './projections/views';
export { rebuildSession } from './projections/rebuild-session';
export { rebuildRun } from './projections/rebuild-run';
export { rebuildTranscript } from './projections/rebuild-transcript';
export { rebuildStore, storeBytes } from './projections/rebuild-store';
export { rebuildClientToolNames } from './projections/rebuild-client-tools';
export { TenancyRecord, TENANCY_RECORD_TTL_SECONDS, type TenancyMode } from './tenancy-record';
export { TenantUids, type UidRange } from './tenant-uids';
export { TenantQuotaLedger, type LeasedQuota, type ParkedAdmission } from './tenant-quotas';
export { SlotLeases, SLOT_LEASE_MS, type HeldSlot } from './slot-leases';
export { SessionIndex } from './session-index';
export { RunListing, LIVE_RUN_SCAN } from './run-listing';
export { WorkerReports, type LiveWorker } from './worker-reports';
export { PolicyStore } from './policy-store';
export { ApprovalLedger, type ApprovalRequest, type StoredApproval } from './approval-ledger';

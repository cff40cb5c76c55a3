export * from './errors';
export { KeySpace, type SessionScriptKeys } from './keys';
export { EventLog, MAX_PAGE, type AppendInput } from './event-log';
export { SameTickAppends } from './same-tick-appends';
export { SessionLedger, type SessionPatch, type SessionSettingsAt } from './session-ledger';
export { RunLedger, IDEMPOTENCY_TTL_SECONDS, type FinishType, type KeyUsed, type Reservation, type RunRequestedData } from './run-ledger';
export { keyedWaitStep, type KeyedWaitState, type KeyedWaitStep } from './keyed-wait';
export { RunReplies, publishAnswer, publishStarted, resultReply, unheardReplyChannel } from './run-replies';
export {
  RunOwnership,
  pastExpiry,
  strandedRunFate,
  unansweredLegFate,
  type LocalRunHolder,
  type OwnedRun,
  type RunFate,
  type StrandedRunFate,
  type UnansweredLegFate,
} from './run-ownership';
export { RunEnds, ParkedRunHoldings, type EndingRun, type LostAnswer, type RunHoldings } from './run-ends';
export {
  createRedis,
  closeConnection,
  closeSubscriber,
  duplicateForBlocking,
  duplicateForBulk,
  waitUntilReady,
  toStoreError,
  isStoreFull,
  mayHaveRun,
  isStoreUnavailable,
  guard,
  execMulti,
  onStoreFailure,
  type CreateRedisOptions,
  type RedisClient,
  type RedisTarget,
  type StoreFailureReason,
} from './redis';
export { StoreLedger, type StoreWrites, type StoreCommitInput, type StoreCommitOutcome } from './store-ledger';
export { ClientToolsLedger, type ClientToolsRead } from './client-tools-ledger';
export { shadowed, SkillLedger, type SkillSet, type TenantSkillPut } from './skill-ledger';
export { ScriptLoader, SCRIPT_NAMES, type ScriptName } from './script-loader';
export { createEventStores, eventStoreSettings, type EventStores } from './event-stores';
export { retryWhileStoreUnavailable, type StoreRetryOptions } from './store-retry';
export { LiveRunIndex, ParkedRunIndex, type DueRun } from './parked-run-index';
export { ParkedImageStore, type StoredParkedImage } from './parked-image-store';
export { NotAwaitingPlatformError, recordPlatformAnswers } from './platform-answers';
export { openPlatformCalls, recordsPlatformAnswer } from './platform-calls';
export { DEFAULT_EVENTS_SCRIPT_SETTINGS, type EventsScriptSettings } from './script-loader';
export { type LoggedEvent } from './event-encoding';
export { type SessionRecord, type SessionSettings } from './projections/views';
export { rebuildSession } from './projections/rebuild-session';
export { rebuildRun } from './projections/rebuild-run';
export { rebuildTranscript } from './projections/rebuild-transcript';
export { rebuildStore, storeBytes } from './projections/rebuild-store';
export { rebuildClientToolNames } from './projections/rebuild-client-tools';
export { SessionIndex } from './session-index';
export { CLUSTER_SLOTS, keySlot, slotTag } from './cluster-slots';
export { ErrorGate, redisFailureLog } from './error-gate';
export { RunListing, LIVE_RUN_SCAN } from './run-listing';
export { PolicyStore } from './policy-store';
export { ApprovalLedger, type ApprovalRequest, type StoredApproval } from './approval-ledger';
export { StoredBytesLedger, type SessionMeasure } from './stored-bytes-ledger';
export { SessionRemoval } from './session-removal';
export { publishWorkspaceRemoval, WorkspaceRemovals } from './workspace-removals';

/** Runs in the log: the run ledger, ownership and ends, replies, parking, listings. */
export { RunLedger, IDEMPOTENCY_TTL_SECONDS, type FinishType, type RunRequestedData } from './run-ledger';
export type { KeyUsed, Reservation } from './resume-reservation';
export { keyedWaitStep, type KeyedWaitState, type KeyedWaitStep } from './keyed-wait';
export { RunReplies, publishAnswer, publishStarted, resultReply, unheardReplyChannel } from './run-replies';
export {
  RunOwnership,
  lapsedLegFate,
  strandedRunFate,
  unansweredLegFate,
  type LapsedLegFate,
  type LocalRunHolder,
  type OwnedRun,
  type RunFate,
  type StrandedRunFate,
  type UnansweredLegFate,
} from './run-ownership';
export { parkingTerm, pastExpiry, termHalfSpent, type ParkingTerm } from './parking-term';
export type { ParkInput } from './run-parking';
export { ParkedRunExpiry, expiryStep, type ExpiringRun, type ExpiryAsker, type ExpiryStep } from './parked-run-expiry';
export { RunEnds, ParkedRunHoldings, type EndingRun, type LostAnswer, type RunHoldings } from './run-ends';
export { LiveRunIndex, ParkedRunIndex, type DueRun } from './parked-run-index';
export { RunningLegIndex, type RunningLeg } from './running-leg-index';
export { ParkedImageStore, type StoredParkedImage } from './parked-image-store';
export { NotAwaitingPlatformError, recordPlatformAnswers } from './platform-answers';
export { recordsPlatformAnswer } from './platform-calls';
export { RunListing, LIVE_RUN_SCAN } from './run-listing';
export { RunIds, mintRunId, placeOfRunId, type RunIdPlace } from './run-ids';
export { McpTaskStore, type NewMcpTask } from './mcp-task-store';
export {
  CellStream,
  CELL_GROUP,
  CELL_LANES,
  cellLane,
  type CellEntry,
  type CellEntryRef,
  type CellLane,
  type PendingCellEntry,
} from './cell-stream';

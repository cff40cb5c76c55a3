export type { BridgeHost, CallGate, CellRunRequest, ExternalSettlement, RestorePlan, ResumeOptions, SandboxVariant } from './engine/types';
export { SandboxPool } from './pool/sandbox-pool';
export { DEFAULT_MAX_PARKED, type RunsLostListener, type SandboxPoolOptions, type SandboxPoolStats } from './pool/pool-options';
export type { ParkedEviction } from './pool/parked-runs';
export type { PoolLogger } from './pool/pool-thread';
export * from './errors';
export * from './replay/replay-plan';
export { CellStartProbe } from './engine/cell-start-probe';
export {
  checkBinding,
  GUEST_PRELUDE_VERSION,
  PARKED_IMAGE_VERSION,
  ParkedImageMismatchError,
  RUN_LOST_PENDING_CALL_MESSAGE,
  type ParkedImageBinding,
} from './engine/parked-image';

export type {
  BridgeCall,
  BridgeHost,
  CellOutcome,
  CellRunRequest,
  CompletedOutcome,
  ExternalSettlement,
  FailedOutcome,
  PendingCall,
  ResumeOptions,
  SandboxVariant,
  TerminalCellOutcome,
  WaitingOutcome,
} from './engine/types';
export {
  DEFAULT_MAX_PARKED,
  SandboxPool,
  type RunsLostListener,
  type SandboxPoolOptions,
  type SandboxPoolStats,
} from './pool/sandbox-pool';
export type { PoolLogger } from './pool/pool-thread';
export * from './errors';
export * from './result';
export * from './source';
export * from './replay/replay-plan';
export { CellStartProbe } from './engine/cell-start-probe';

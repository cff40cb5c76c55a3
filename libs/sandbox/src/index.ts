export type { BridgeCall, BridgeHost, CellOutcome, CellRunRequest, SandboxVariant } from './engine/types';
export { SandboxPool, type SandboxPoolOptions } from './pool/sandbox-pool';
export type { PoolLogger } from './pool/pool-thread';
export * from './errors';
export * from './result';
export * from './source';

/** The Redis platform: the client and its failure classes, the script loader, keys and slots. */
export * from './errors';
export { KeySpace, type SessionScriptKeys } from './keys';
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
export { ScriptLoader, SCRIPT_NAMES, type ScriptName } from './script-loader';
export { startScriptLibraries, type ScriptLibrary } from './script-library';
export { retryWhileStoreUnavailable, type StoreRetryOptions } from './store-retry';
export { DEFAULT_EVENTS_SCRIPT_SETTINGS, type EventsScriptSettings } from './script-loader';
export { CLUSTER_SLOTS, keySlot, slotTag } from './cluster-slots';
export { ErrorGate, redisFailureLog } from './error-gate';

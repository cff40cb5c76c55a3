export * from './errors';
export * from './limits';
export { StoreBuffer, type StoreLookup } from './store-buffer';
export { SessionStore, type StoreCommit, type StoreCommitReceipt } from './session-store';
export { ResultsStore, type ResultsLimits } from './results/results-store';
export { describeResult, type ResultDescriptor } from './results/describe-result';
export { STORE_SCRIPT_NAMES, storeScripts, type StoreScriptName } from './scripts';

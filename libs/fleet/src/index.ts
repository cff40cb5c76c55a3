export { TenantUidsExhaustedError } from './errors';
export { FLEET_SCRIPT_NAMES, fleetScripts, type FleetScriptName } from './scripts';
export { createFleetStores, fleetStoreSettings, type FleetStores } from './fleet-stores';
export { WorkerPresence } from './worker-presence';
export { WorkerReports, type LiveWorker } from './worker-reports';
export { DeploymentCatalog } from './deployment-catalog';
export { TenancyRecord, TENANCY_RECORD_TTL_SECONDS, type TenancyMode } from './tenancy-record';
export { TenantUids, type UidRange } from './tenant-uids';
export { TenantQuotaLedger, type CallAdmission, type LeasedQuota, type ParkedAdmission } from './tenant-quotas';
export { SlotLeases, SLOT_LEASE_MS, type LeasedSlot } from './slot-leases';
export {
  NodeRegistry,
  nodeView,
  closeMessages,
  readCloseMessage,
  NODE_BEAT_MS,
  NODE_LEASE_MS,
  type NodeRecord,
  type NodeHold,
  type PairingRefusal,
} from './node-registry';
export { NodeCalls, NodeCallError, type AnswerInbox } from './node-calls';

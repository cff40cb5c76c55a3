import type { AppConfig } from '@codemode/config';
import type { RedisClient } from '@codemode/events';
import type { KeySpace } from '@codemode/events';
import { DeploymentCatalog } from './deployment-catalog';
import { NodeCalls } from './node-calls';
import { NodeRegistry } from './node-registry';
import { fleetScripts } from './scripts';
import { TenancyRecord } from './tenancy-record';
import { TenantQuotaLedger } from './tenant-quotas';
import { TenantUids, type UidRange } from './tenant-uids';
import { WorkerPresence } from './worker-presence';
import { WorkerReports } from './worker-reports';

interface FleetStoresOptions {
  readonly redis: RedisClient;
  readonly keys: KeySpace;
  readonly settings: FleetStoreSettings;
}

interface FleetStoreSettings {
  /** How long a shell scope's home outlives its last request (CODEMODE_SESSION_TTL_SECONDS). */
  readonly shellHomeTtlSeconds: number;
  /** The host uids tenants' shell sandboxes get (CODEMODE_SHELL_UID_RANGE). */
  readonly uidRange: UidRange;
}

/** What a deployment's configuration gives this library's stores, the same in the API and the workers. */
export function fleetStoreSettings(config: Pick<AppConfig, 'tenancySettings' | 'shellSandbox'>): FleetStoreSettings {
  return { shellHomeTtlSeconds: config.tenancySettings.sessionTtlSeconds, uidRange: config.shellSandbox.uidRange };
}

/** Every store of this library. */
export interface FleetStores {
  readonly presence: WorkerPresence;
  readonly reports: WorkerReports;
  readonly quotas: TenantQuotaLedger;
  readonly tenancy: TenancyRecord;
  readonly tenantUids: TenantUids;
  readonly deploymentCatalog: DeploymentCatalog;
  readonly nodes: NodeRegistry;
  readonly nodeCalls: NodeCalls;
}

/** The fleet stores of a process, built once at boot; the quota scripts run through this library's loader. */
export function createFleetStores({ redis, keys, settings }: FleetStoresOptions): FleetStores {
  return {
    presence: new WorkerPresence(redis, keys, { shellHomeTtlSeconds: settings.shellHomeTtlSeconds }),
    reports: new WorkerReports(redis, keys),
    quotas: new TenantQuotaLedger(redis, keys, fleetScripts()),
    tenancy: new TenancyRecord(redis, keys),
    tenantUids: new TenantUids(redis, keys, settings.uidRange),
    deploymentCatalog: new DeploymentCatalog(redis, keys),
    nodes: new NodeRegistry(redis, keys, fleetScripts()),
    nodeCalls: new NodeCalls(redis, keys),
  };
}

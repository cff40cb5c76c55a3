import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { RedisClient } from '@codemode/events';
import type { AppConfig } from '@codemode/config';
import {
  ApprovalLedger,
  ClientToolsLedger,
  SkillLedger,
  TenantToolsLedger,
  createEventStores,
  startScriptLibraries,
  eventStoreSettings,
  createRedis,
  EventLog,
  KeySpace,
  LiveRunIndex,
  onStoreFailure,
  RunningLegIndex,
  ParkedImageStore,
  ParkedRunIndex,
  PolicyStore,
  RunLedger,
  SessionLedger,
  waitUntilReady,
  type EventStores,
} from '@codemode/events';
import {
  createFleetStores,
  fleetStoreSettings,
  DeploymentCatalog,
  TenancyRecord,
  TenantQuotaLedger,
  TenantUids,
  WorkerPresence,
  WorkerReports,
  NodeCalls,
  NodeRegistry,
  type FleetStores,
} from '@codemode/fleet';
import { ResultsStore, SessionStore, storeScripts } from '@codemode/store';
import { DEFAULT_MAX_PARKED, SandboxPool } from '@codemode/sandbox';
import { coreGuestCatalogJson } from '@codemode/tools';
import { createWorkerMetrics, WorkerMetrics, type Logger } from '@codemode/telemetry';
import { MeteredEventLog, MeteredRunLedger, MeteredSessionStore } from '../metrics/metered-ledgers';
import { providersFrom } from './lib-providers';
import { WorkerTenancy } from './worker-tenancy.service';
import { APP_CONFIG, LOGGER, REDIS } from './tokens';

const EVENT_STORES = Symbol('EVENT_STORES');
const FLEET_STORES = Symbol('FLEET_STORES');

/**
 * The libs/events and libs/fleet classes the worker's modules inject, by their field in the lib's
 * stores; RunLedger and EventLog are the metered ones below, over the same loader.
 */
const EVENT_CLASSES = {
  clientTools: ClientToolsLedger,
  liveRuns: LiveRunIndex,
  parkedRuns: ParkedRunIndex,
  runningLegs: RunningLegIndex,
  parkedImages: ParkedImageStore,
  policies: PolicyStore,
  approvals: ApprovalLedger,
  skills: SkillLedger,
  tenantTools: TenantToolsLedger,
  // Read when a background shell session ends: its notifyUrl and shell settings (SPEC §7).
  sessions: SessionLedger,
};
const FLEET_CLASSES = {
  presence: WorkerPresence,
  reports: WorkerReports,
  quotas: TenantQuotaLedger,
  tenancy: TenancyRecord,
  tenantUids: TenantUids,
  deploymentCatalog: DeploymentCatalog,
  nodes: NodeRegistry,
  nodeCalls: NodeCalls,
};

/** Redis, the ledgers and the sandbox thread pool, shared by the worker's consumers. */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG, LOGGER],
      useFactory: async (c: AppConfig, logger: Logger) => {
        const redis = createRedis(c.redis, {
          name: `worker-${c.workerId}`,
          onError: (error) => logger.warn({ err: error.message }, 'Redis connection error; retrying'),
        });
        // Take no job before Redis answers; if it does not, start anyway and report not-ready.
        await waitUntilReady(redis, 10_000).catch(() => logger.warn('Redis not ready at start-up; will keep retrying'));
        return redis;
      },
    },
    { provide: KeySpace, inject: [APP_CONFIG], useFactory: (c: AppConfig) => new KeySpace(c.keyPrefix) },
    {
      provide: EVENT_STORES,
      inject: [REDIS, KeySpace, APP_CONFIG, LOGGER],
      // Retention, the per-run history cap (SPEC §6) and session expiry (§10) are compiled into the append scripts.
      useFactory: (redis: RedisClient, keys: KeySpace, c: AppConfig, logger: Logger): EventStores => {
        const stores = createEventStores({ redis, keys, settings: eventStoreSettings(c) });
        // Earlier releases' script libraries, left in Redis by their processes, are deleted; a
        // library Redis would not load is logged (script-library.ts).
        startScriptLibraries(redis, [stores.scripts, storeScripts()], logger);
        return stores;
      },
    },
    ...providersFrom<EventStores>(EVENT_STORES, EVENT_CLASSES),
    {
      provide: FLEET_STORES,
      inject: [REDIS, KeySpace, APP_CONFIG],
      useFactory: (redis: RedisClient, keys: KeySpace, c: AppConfig): FleetStores =>
        createFleetStores({ redis, keys, settings: fleetStoreSettings(c) }),
    },
    ...providersFrom<FleetStores>(FLEET_STORES, FLEET_CLASSES),
    {
      provide: WorkerMetrics,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => {
        const metrics = createWorkerMetrics(c.version, { tenantLabel: c.tenancySettings.metricsTenantLabel });
        onStoreFailure((reason) => metrics.storeFailed(reason));
        return metrics;
      },
    },
    // Every ledger write of the worker is timed and checked for a stale epoch (codemode_event_append_*).
    {
      provide: RunLedger,
      inject: [REDIS, KeySpace, EVENT_STORES, WorkerMetrics, LOGGER],
      useFactory: (r: RedisClient, k: KeySpace, e: EventStores, m: WorkerMetrics, l: Logger) =>
        new MeteredRunLedger(r, k, e.scripts, { metrics: m, logger: l }),
    },
    {
      provide: EventLog,
      inject: [REDIS, KeySpace, EVENT_STORES, WorkerMetrics, LOGGER],
      useFactory: (r: RedisClient, k: KeySpace, e: EventStores, m: WorkerMetrics, l: Logger) =>
        new MeteredEventLog(r, k, e.scripts, { metrics: m, logger: l }),
    },
    WorkerTenancy,
    {
      provide: SessionStore,
      inject: [REDIS, KeySpace, EVENT_STORES, WorkerMetrics, LOGGER],
      useFactory: (r: RedisClient, k: KeySpace, e: EventStores, m: WorkerMetrics, l: Logger) =>
        new MeteredSessionStore(r, k, e.scripts, { metrics: m, logger: l }),
    },
    { provide: ResultsStore, inject: [REDIS, KeySpace], useFactory: (r: RedisClient, k: KeySpace) => new ResultsStore(r, k) },
    {
      provide: SandboxPool,
      inject: [APP_CONFIG, LOGGER, WorkerTenancy],
      // Threads and their first instances are warmed before the worker takes any job.
      useFactory: (c: AppConfig, logger: Logger, tenancy: WorkerTenancy) =>
        SandboxPool.start({
          threads: c.sandboxThreads,
          logger: (level, msg, fields) => logger[level](fields ?? {}, msg),
          maxParkedMemoryBytes: c.workerParkedMemoryBytes,
          // SPEC §10: one tenant keeps at most half of the in-memory parked slots.
          maxParkedPerTenant: () => tenancy.tenantShare(DEFAULT_MAX_PARKED),
          // SPEC §10: and the guest time of at most half of the threads (rounded up).
          maxGuestThreadsPerTenant: () => (tenancy.mode === 'multi' ? Math.ceil(c.sandboxThreads / 2) : c.sandboxThreads),
          // Every session's catalog has the core tools: their handles come prepared with the boot image.
          preparedCatalogJson: coreGuestCatalogJson(),
        }),
    },
  ],
  exports: [
    REDIS,
    KeySpace,
    WorkerMetrics,
    RunLedger,
    EventLog,
    ...Object.values(EVENT_CLASSES),
    ...Object.values(FLEET_CLASSES),
    WorkerTenancy,
    SessionStore,
    ResultsStore,
    SandboxPool,
  ],
})
export class CoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly pool: SandboxPool,
    private readonly clientTools: ClientToolsLedger,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
    this.clientTools.close();
    this.redis.disconnect();
  }
}

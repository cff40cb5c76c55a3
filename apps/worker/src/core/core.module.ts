import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { AppConfig } from '@codemode/config';
import {
  ClientToolsLedger,
  createRedis,
  EventLog,
  KeySpace,
  LiveRunIndex,
  onStoreFailure,
  ParkedRunIndex,
  RunLedger,
  ScriptLoader,
  waitUntilReady,
} from '@codemode/events';
import { DeploymentCatalog, TenancyRecord, TenantUids, WorkerPresence } from '@codemode/fleet';
import { ResultsStore, SessionStore } from '@codemode/store';
import { DEFAULT_MAX_PARKED, SandboxPool } from '@codemode/sandbox';
import { createWorkerMetrics, WorkerMetrics, type Logger } from '@codemode/telemetry';
import { MeteredEventLog, MeteredRunLedger, MeteredSessionStore } from '../metrics/metered-ledgers';
import { WorkerTenancy } from './worker-tenancy.service';
import { APP_CONFIG, LOGGER, REDIS } from './tokens';

/** Redis, the ledgers and the sandbox thread pool, shared by the worker's consumers. */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG, LOGGER],
      useFactory: async (c: AppConfig, logger: Logger) => {
        const redis = createRedis(c.redisUrl, {
          name: `worker-${c.workerId}`,
          onError: (error) => logger.warn({ err: error.message }, 'Redis connection error; retrying'),
        });
        // Take no job before Redis answers; if it does not, start anyway and report not-ready.
        await waitUntilReady(redis, 10_000).catch(() => logger.warn('Redis not ready at start-up; will keep retrying'));
        return redis;
      },
    },
    {
      provide: KeySpace,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => {
        // Retention, the per-run history cap (SPEC §6) and session expiry (§10) are compiled into the append scripts.
        ScriptLoader.configureDefault({ ...c.history, sessionTtlSeconds: c.tenancySettings.sessionTtlSeconds });
        return new KeySpace(c.keyPrefix);
      },
    },
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
      inject: [REDIS, KeySpace, WorkerMetrics, LOGGER],
      useFactory: (r: Redis, k: KeySpace, m: WorkerMetrics, l: Logger) => new MeteredRunLedger(r, k, { metrics: m, logger: l }),
    },
    {
      provide: EventLog,
      inject: [REDIS, KeySpace, WorkerMetrics, LOGGER],
      useFactory: (r: Redis, k: KeySpace, m: WorkerMetrics, l: Logger) => new MeteredEventLog(r, k, { metrics: m, logger: l }),
    },
    {
      provide: WorkerPresence,
      inject: [REDIS, KeySpace, APP_CONFIG],
      useFactory: (r: Redis, k: KeySpace, c: AppConfig) =>
        new WorkerPresence(r, k, { shellHomeTtlSeconds: c.tenancySettings.sessionTtlSeconds }),
    },
    { provide: ParkedRunIndex, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new ParkedRunIndex(r, k) },
    { provide: LiveRunIndex, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new LiveRunIndex(r, k) },
    { provide: TenancyRecord, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new TenancyRecord(r, k) },
    {
      provide: TenantUids,
      inject: [REDIS, KeySpace, APP_CONFIG],
      useFactory: (r: Redis, k: KeySpace, c: AppConfig) => new TenantUids(r, k, c.shellSandbox.uidRange),
    },
    WorkerTenancy,
    { provide: ClientToolsLedger, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new ClientToolsLedger(r, k) },
    { provide: DeploymentCatalog, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new DeploymentCatalog(r, k) },
    {
      provide: SessionStore,
      inject: [REDIS, KeySpace, WorkerMetrics, LOGGER],
      useFactory: (r: Redis, k: KeySpace, m: WorkerMetrics, l: Logger) => new MeteredSessionStore(r, k, { metrics: m, logger: l }),
    },
    { provide: ResultsStore, inject: [REDIS, KeySpace], useFactory: (r: Redis, k: KeySpace) => new ResultsStore(r, k) },
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
          maxParkedPerTenant: () => (tenancy.mode === 'multi' ? Math.floor(DEFAULT_MAX_PARKED / 2) : DEFAULT_MAX_PARKED),
          // SPEC §10: and the guest time of at most half of the threads (rounded up).
          maxGuestThreadsPerTenant: () => (tenancy.mode === 'multi' ? Math.ceil(c.sandboxThreads / 2) : c.sandboxThreads),
        }),
    },
  ],
  exports: [
    REDIS,
    KeySpace,
    WorkerMetrics,
    RunLedger,
    EventLog,
    WorkerPresence,
    ParkedRunIndex,
    LiveRunIndex,
    TenancyRecord,
    TenantUids,
    WorkerTenancy,
    ClientToolsLedger,
    DeploymentCatalog,
    SessionStore,
    ResultsStore,
    SandboxPool,
  ],
})
export class CoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly pool: SandboxPool,
    private readonly clientTools: ClientToolsLedger,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
    this.clientTools.close();
    this.redis.disconnect();
  }
}

import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import type { RedisClient } from '@codemode/events';
import { QUEUES } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import {
  ApprovalLedger,
  ClientToolsLedger,
  SkillLedger,
  TenantToolsLedger,
  createEventStores,
  startScriptLibraries,
  eventStoreSettings,
  CellStream,
  closeConnection,
  createRedis,
  EventLog,
  KeySpace,
  LiveRunIndex,
  ParkedImageStore,
  PolicyStore,
  RunLedger,
  RunIds,
  McpTaskStore,
  RunListing,
  RunReplies,
  SessionIndex,
  SessionLedger,
  SessionRemoval,
  StoredBytesLedger,
  waitUntilReady,
  type CreateRedisOptions,
  type EventStores,
} from '@codemode/events';
import {
  createFleetStores,
  fleetStoreSettings,
  DeploymentCatalog,
  NodeCalls,
  NodeRegistry,
  TenancyRecord,
  TenantQuotaLedger,
  WorkerPresence,
  WorkerReports,
  type FleetStores,
} from '@codemode/fleet';
import type { Logger } from '@codemode/telemetry';
import { SessionStore, storeScripts } from '@codemode/store';
import { BodyThreads } from '../bodies/body-threads';
import { CellDispatch } from '../queues/cell-dispatch';
import { CellQueue } from '../queues/cell-queue';
import { queueOptions } from '../queues/queue-options';
import { providersFrom } from './lib-providers';
import { ShellQueue } from '../queues/shell-queue';
import { TenancyAnnouncement } from './tenancy-announcement.service';
import { WorkerQueues } from '../queues/worker-queues';
import { APP_CONFIG, LOGGER, REDIS } from './tokens';

export function connect(config: AppConfig, logger: Logger, name: string, options: CreateRedisOptions = {}): RedisClient {
  return createRedis(config.redis, {
    name,
    ...options,
    onError: (error) => logger.warn({ connection: name, err: error.message }, 'Redis connection error; retrying'),
  });
}

const REPLIES_CONNECTION = Symbol('REPLIES_CONNECTION');
const QUEUES_CONNECTION = Symbol('QUEUES_CONNECTION');
const EVENT_STORES = Symbol('EVENT_STORES');
const FLEET_STORES = Symbol('FLEET_STORES');

/** The libs/events and libs/fleet classes the API's modules inject, by their field in the lib's stores. */
const EVENT_CLASSES = {
  log: EventLog,
  runs: RunLedger,
  sessions: SessionLedger,
  clientTools: ClientToolsLedger,
  liveRuns: LiveRunIndex,
  parkedImages: ParkedImageStore,
  policies: PolicyStore,
  approvals: ApprovalLedger,
  sessionIndex: SessionIndex,
  runListing: RunListing,
  runIds: RunIds,
  storedBytes: StoredBytesLedger,
  sessionRemoval: SessionRemoval,
  skills: SkillLedger,
  tenantTools: TenantToolsLedger,
  mcpTasks: McpTaskStore,
};
const FLEET_CLASSES = {
  presence: WorkerPresence,
  reports: WorkerReports,
  quotas: TenantQuotaLedger,
  tenancy: TenancyRecord,
  deploymentCatalog: DeploymentCatalog,
  nodes: NodeRegistry,
  nodeCalls: NodeCalls,
};

/**
 * Redis-backed services shared by every controller of the API. The queue producers have a
 * connection of their own (BullMQ leaves a connection it was given open): BullMQ defines its ~64
 * scripts as commands on the connection it is given, and ioredis copies every defined command
 * onto each pipeline it builds, auto-pipelining's batches included: on the API's connection that
 * made every batch of every request cost ~46 µs instead of ~4.
 */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG, LOGGER],
      useFactory: async (c: AppConfig, l: Logger) => {
        const redis = connect(c, l, 'api');
        // As the worker does: listen only once Redis answers (a fail-fast client refuses commands
        // until then, so the first requests were answered "store unavailable"); if it does not,
        // start anyway and report not-ready.
        await waitUntilReady(redis, 10_000).catch(() => l.warn('Redis not ready at start-up; will keep retrying'));
        return redis;
      },
    },
    {
      provide: REPLIES_CONNECTION,
      inject: [APP_CONFIG, LOGGER],
      useFactory: (c: AppConfig, l: Logger) => connect(c, l, 'api-replies', { subscriber: true }),
    },
    {
      provide: QUEUES_CONNECTION,
      inject: [APP_CONFIG, LOGGER],
      // Not awaited: BullMQ waits for it to be ready before a queue's first command.
      useFactory: (c: AppConfig, l: Logger) => connect(c, l, 'api-queues'),
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
      provide: RunReplies,
      inject: [REPLIES_CONNECTION, KeySpace, LOGGER],
      useFactory: (r: RedisClient, k: KeySpace, logger: Logger) => {
        const replies = new RunReplies(r, k, `api-${process.pid}-${randomBytes(4).toString('hex')}`);
        // Not awaited: during a Redis outage the API still boots and answers runtime_unavailable.
        replies.start().catch((error: unknown) => logger.error({ err: error }, 'could not subscribe to the reply channel'));
        return replies;
      },
    },
    {
      provide: CellQueue,
      inject: [QUEUES_CONNECTION, KeySpace, APP_CONFIG],
      useFactory: (r: RedisClient, k: KeySpace, c: AppConfig) => CellQueue.open(r, k, c.redis.queueShards),
    },
    {
      provide: CellDispatch,
      inject: [APP_CONFIG, CellQueue, REDIS, KeySpace],
      useFactory: (c: AppConfig, queue: CellQueue, r: RedisClient, k: KeySpace) =>
        new CellDispatch(c.redis.cellDispatch, queue, new CellStream(r, k, c.redis.queueShards)),
    },
    {
      provide: ShellQueue,
      inject: [QUEUES_CONNECTION, KeySpace],
      useFactory: (r: RedisClient, k: KeySpace) => new ShellQueue(new Queue(QUEUES.shell, queueOptions(r, k, QUEUES.shell))),
    },
    {
      provide: SessionStore,
      inject: [REDIS, KeySpace, EVENT_STORES],
      useFactory: (r: RedisClient, k: KeySpace, events: EventStores) => new SessionStore(r, k, events.scripts),
    },
    TenancyAnnouncement,
    { provide: BodyThreads, useFactory: () => new BodyThreads() },
    {
      provide: WorkerQueues,
      inject: [QUEUES_CONNECTION, KeySpace, WorkerPresence],
      useFactory: (r: RedisClient, k: KeySpace, p: WorkerPresence) => new WorkerQueues(r, k, p),
    },
  ],
  exports: [
    REDIS,
    KeySpace,
    ...Object.values(EVENT_CLASSES),
    ...Object.values(FLEET_CLASSES),
    RunReplies,
    CellQueue,
    CellDispatch,
    ShellQueue,
    WorkerQueues,
    SessionStore,
    TenancyAnnouncement,
    BodyThreads,
  ],
})
export class CoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(QUEUES_CONNECTION) private readonly queuesConnection: RedisClient,
    private readonly replies: RunReplies,
    private readonly queue: CellQueue,
    private readonly workerQueues: WorkerQueues,
    private readonly shellQueue: ShellQueue,
    private readonly clientTools: ClientToolsLedger,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    await this.workerQueues.close();
    await this.shellQueue.close().catch(() => undefined);
    await this.replies.close().catch(() => undefined);
    this.clientTools.close();
    closeConnection(this.queuesConnection);
    this.redis.disconnect();
  }
}

import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import type { AppConfig } from '@codemode/config';
import { workerQueueName } from '@codemode/contracts';
import { closeConnection, createRedis, KeySpace, RunningLegIndex } from '@codemode/events';
import { DeploymentCatalog, WorkerPresence } from '@codemode/fleet';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/** A queue is removed once its worker's lease is gone and it was last seen this many leases ago. */
export const QUEUE_REMOVAL_GRACE_LEASES = 3;
/** Queues looked at per sweep; the rest wait for the next one. */
const SWEEP_BATCH = 20;

/**
 * Removes the queues of workers that are gone (SPEC §10: no key lives forever). Every worker
 * registers its own queue (WorkerPresence registry, rescored by each beat and by the API after
 * each job it routes there) and, once per lease, removes any registered queue whose worker has no
 * lease and was last seen more than QUEUE_REMOVAL_GRACE_LEASES leases ago. A worker removes its
 * own queue itself when it shuts down cleanly (WorkerShutdown). Jobs still in a removed queue
 * were never going to be taken: their callers are answered by their own deadlines, as they were
 * before the queue went (see apps/api WorkerQueues). The worker's index of running legs goes with
 * its queue (RunningLegIndex: a leg its lapse did not get rebuilt is the live-run sweep's). Also
 * keeps the MCP catalog snapshot alive.
 */
@Injectable()
export class WorkerQueueJanitor implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly presence: WorkerPresence,
    private readonly catalog: DeploymentCatalog,
    private readonly keys: KeySpace,
    private readonly runningLegs: RunningLegIndex,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.config.presenceTtlMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** One sweep; answers how many queues it removed. */
  async sweep(now = Date.now()): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      await this.catalog.keep();
      const silentBefore = now - this.config.presenceTtlMs * (1 + QUEUE_REMOVAL_GRACE_LEASES);
      let removed = 0;
      for (const workerId of await this.presence.silentSince(silentBefore, SWEEP_BATCH)) {
        if (workerId === this.config.workerId || (await this.presence.isAlive(workerId))) continue;
        await this.removeQueue(workerId);
        this.logger.info({ departed: workerId }, 'removed the queue of a departed worker');
        removed += 1;
      }
      return removed;
    } catch (error) {
      this.logger.warn({ err: error }, 'worker queue sweep failed; retrying at the next one');
      return 0;
    } finally {
      this.sweeping = false;
    }
  }

  /** Clean shutdown, once this worker takes no jobs and holds no lease: removes its own queue. */
  async removeOwnQueue(): Promise<void> {
    clearInterval(this.timer);
    await this.removeQueue(this.config.workerId);
  }

  /** Forgets the worker first, then removes its queue (the order WorkerPresence.forget explains). */
  private async removeQueue(workerId: string): Promise<void> {
    await this.presence.forget(workerId);
    await this.runningLegs.drop(workerId);
    const name = workerQueueName(workerId);
    // A connection of its own: BullMQ defines its scripts as commands on the connection it is
    // given, and ioredis copies them onto every pipeline that connection builds afterwards (the
    // API's core module says what that costs).
    const connection = createRedis(this.config.redis, {
      name: `worker-${this.config.workerId}-janitor`,
      onError: (error) =>
        this.logger.warn({ err: error, departed: workerId }, 'Redis connection error while removing a queue; a later sweep retries'),
    });
    const queue = new Queue(name, { connection, prefix: this.keys.queuePrefix(name), skipMetasUpdate: true });
    try {
      await queue.obliterate({ force: true });
    } catch (error) {
      // Registered again, so a later sweep retries.
      await this.presence.queued(workerId).catch(() => undefined);
      throw error;
    } finally {
      await queue.close().catch(() => undefined);
      closeConnection(connection);
    }
  }
}

import { WorkerReportSchema, type WorkerReport } from '@codemode/contracts';
import type { RedisClient } from '@codemode/events';
import { guard, type KeySpace } from '@codemode/events';

/** A live worker as the fleet view shows it. */
export interface LiveWorker {
  workerId: string;
  /** Milliseconds left on its lease (`<p>:alive:<id>`). */
  leaseLeftMs: number;
  report: WorkerReport | null;
}

/** Workers looked at per fleet read: the registry also holds queues of workers long gone. */
const REGISTRY_SCAN = 1000;

/**
 * What each worker says about itself (start time, threads, parked runs), written beside its lease
 * and expiring with it, and the read of who is alive for the operator fleet view.
 */
export class WorkerReports {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
  ) {}

  async publish(workerId: string, report: WorkerReport, ttlMs: number): Promise<void> {
    await guard(() => this.redis.set(this.keys.workerReport(workerId), JSON.stringify(report), 'PX', ttlMs));
  }

  /** Registered workers whose lease is current, most recently seen first. */
  async alive(): Promise<LiveWorker[]> {
    const ids = await this.registered();
    if (ids.length === 0) return [];
    // One command per key, not a pipeline: each worker's keys are in a slot of their own on a
    // Cluster (auto-pipelining still batches them per node).
    const rows = await guard(() =>
      Promise.all(ids.map((id) => Promise.all([this.redis.pttl(this.keys.workerAlive(id)), this.redis.get(this.keys.workerReport(id))]))),
    );
    const workers: LiveWorker[] = [];
    ids.forEach((workerId, i) => {
      const [leaseLeftMs, report] = rows[i];
      if (leaseLeftMs < 0) return;
      workers.push({ workerId, leaseLeftMs, report: parseReport(report) });
    });
    return workers;
  }

  /** How many registered workers hold a current lease (SPEC §19: `codemode_workers_live`, readiness). */
  async liveCount(): Promise<number> {
    const ids = await this.registered();
    const leases = await guard(() => Promise.all(ids.map((id) => this.redis.pttl(this.keys.workerAlive(id)))));
    return leases.filter((leaseLeftMs) => leaseLeftMs >= 0).length;
  }

  private registered(): Promise<string[]> {
    return guard(() => this.redis.zrevrange(this.keys.workerQueues(), 0, REGISTRY_SCAN - 1));
  }
}

function parseReport(text: string | null): WorkerReport | null {
  if (text === null) return null;
  try {
    const parsed = WorkerReportSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

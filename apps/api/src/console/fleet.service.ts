import { Inject, Injectable } from '@nestjs/common';
import type { FleetRun, FleetView, FleetWorker, RunView } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { RunListing, SessionIndex, WorkerReports } from '@codemode/events';
import { CellQueue } from '../core/cell-queue';
import { APP_CONFIG } from '../core/tokens';

/** Sessions of the tenant, newest activity first, whose live runs the fleet view places on workers. */
export const FLEET_SESSION_SCAN = 50;

/**
 * `GET /v1/fleet`: who is alive and how busy (every tenant sees the same workers and queue depth,
 * which name no tenant), and the caller's own live runs per worker, found through the caller's
 * session index only, so another tenant's runs are never read.
 */
@Injectable()
export class FleetService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly reports: WorkerReports,
    private readonly cells: CellQueue,
    private readonly index: SessionIndex,
    private readonly runs: RunListing,
  ) {}

  async view(tenant: string): Promise<FleetView> {
    const [alive, queue, live] = await Promise.all([this.reports.alive(), this.cells.stats(), this.liveRunsOf(tenant)]);
    const workers: FleetWorker[] = alive.map((w) => ({
      workerId: w.workerId,
      leaseAgeMs: Math.max(0, this.config.presenceTtlMs - w.leaseLeftMs),
      report: w.report,
      runs: { running: [], parked: [] },
    }));
    const byId = new Map(workers.map((w) => [w.workerId, w]));
    const unheld: FleetRun[] = [];
    for (const run of live) {
      const worker = run.owner === null ? undefined : byId.get(run.owner);
      const row: FleetRun = { sessionId: run.sessionId, runId: run.runId, title: run.title, status: run.status };
      if (!worker) unheld.push(row);
      else if (run.status === 'waiting') worker.runs.parked.push(row);
      else worker.runs.running.push(row);
    }
    return {
      workers,
      queue: {
        waiting: queue.counts.waiting + queue.counts.prioritized,
        active: queue.counts.active,
        delayed: queue.counts.delayed,
        oldestWaitingAt: queue.oldestWaitingAt === null ? null : new Date(queue.oldestWaitingAt).toISOString(),
      },
      unheld,
    };
  }

  private async liveRunsOf(tenant: string): Promise<RunView[]> {
    const page = await this.index.page(tenant, FLEET_SESSION_SCAN);
    const live = await this.runs.liveRuns(page.sessionIds.map((sessionId) => ({ tenant, sessionId })));
    return live.flat();
  }
}

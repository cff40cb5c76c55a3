import { Inject, Injectable } from '@nestjs/common';
import type { FleetCapacity, FleetRun, FleetView, FleetWorker, FleetWorkerReport, RunSummary, WorkerReport } from '@codemode/contracts';
import { apiTenancy, type AppConfig } from '@codemode/config';
import { RunListing, SessionIndex } from '@codemode/events';
import { NodeRegistry, nodeView, WorkerReports } from '@codemode/fleet';
import { CellDispatch } from '../queues/cell-dispatch';
import { APP_CONFIG } from '../core/tokens';

/** Sessions of the tenant, newest activity first, whose live runs the fleet view places on workers. */
export const FLEET_SESSION_SCAN = 50;

/**
 * `GET /v1/fleet`: who is alive and what they can run, the caller's own paired nodes, and its live runs per worker,
 * found through the caller's session index only, so another tenant's runs are never read.
 * Occupancy (busy threads, parked runs, the queue) counts every tenant's work: in multi-tenant mode
 * it is left out, since a tenant could read another's activity from it (SPEC §10 "Tenants see
 * their own numbers"); in single mode there is no other tenant and it is shown.
 */
@Injectable()
export class FleetService {
  private readonly showsOccupancy: boolean;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly reports: WorkerReports,
    private readonly cells: CellDispatch,
    private readonly index: SessionIndex,
    private readonly runs: RunListing,
    private readonly nodes: NodeRegistry,
  ) {
    this.showsOccupancy = apiTenancy(config) === 'single';
  }

  async view(tenant: string): Promise<FleetView> {
    const [alive, queue, live, nodes] = await Promise.all([
      this.reports.alive(),
      this.showsOccupancy ? this.cells.stats() : null,
      this.liveRunsOf(tenant),
      this.nodes.list(tenant),
    ]);
    const workers: FleetWorker[] = alive.map((w) => ({
      workerId: w.workerId,
      leaseAgeMs: Math.max(0, this.config.presenceTtlMs - w.leaseLeftMs),
      report: w.report === null ? null : this.shown(w.report),
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
      capacity: capacityOf(workers),
      queue:
        queue === null
          ? null
          : {
              waiting: queue.counts.waiting + queue.counts.prioritized,
              active: queue.counts.active,
              delayed: queue.counts.delayed,
              oldestWaitingAt: queue.oldestWaitingAt === null ? null : new Date(queue.oldestWaitingAt).toISOString(),
            },
      unheld,
      nodes: nodes.map(nodeView),
    };
  }

  private shown(report: WorkerReport): FleetWorkerReport {
    if (this.showsOccupancy) return report;
    const { busyThreads: _busy, parkedRuns: _parked, ...capacity } = report;
    return capacity;
  }

  private async liveRunsOf(tenant: string): Promise<RunSummary[]> {
    const page = await this.index.page(tenant, FLEET_SESSION_SCAN);
    const live = await this.runs.liveRuns(page.sessionIds.map((sessionId) => ({ tenant, sessionId })));
    return live.flat();
  }
}

function capacityOf(workers: readonly FleetWorker[]): FleetCapacity {
  const sum = (of: (report: FleetWorkerReport) => number | undefined) =>
    workers.reduce((total, w) => total + (w.report === null ? 0 : (of(w.report) ?? 0)), 0);
  return {
    workers: workers.length,
    threads: sum((r) => r.threads),
    cellSlots: sum((r) => r.cellSlots),
    parkedSlots: sum((r) => r.parkedSlots),
  };
}

import { Counter, Gauge, Histogram } from 'prom-client';
import { HTTP_BUCKETS } from './buckets';
import {
  API_QUEUE_LABELS,
  MCP_TASK_STATUSES,
  QUEUE_JOB_STATES,
  UNANSWERED_LEG_FATES,
  type ApiQueueLabel,
  type QueueJobState,
  type UnansweredLegFateLabel,
} from './label-values';
import { METRIC } from './metric-names';
import { ProcessMetrics, type ProcessMetricsOptions } from './process-metrics';

/** `route` of a request no route matched (a raw path would put ids in labels). */
export const UNMATCHED_ROUTE = 'unmatched';

/** The API's metrics: HTTP latency by route template, the shared queues' depth, the live workers. */
export class ApiMetrics extends ProcessMetrics {
  readonly httpRequestDuration = new Histogram<'method' | 'route' | 'status'>({
    name: METRIC.httpRequestDuration,
    help: 'REST request duration, by method, route template and status code.',
    labelNames: ['method', 'route', 'status'],
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });

  readonly queueJobs = new Gauge<'queue' | 'state'>({
    name: METRIC.queueJobs,
    help: 'Jobs in a shared queue by state, read when scraped.',
    labelNames: ['queue', 'state'],
    registers: [this.registry],
  });

  readonly queueOldestWaitingAge = new Gauge<'queue'>({
    name: METRIC.queueOldestWaitingAge,
    help: 'Age of the oldest job waiting in a shared queue (0 when none waits), read when scraped.',
    labelNames: ['queue'],
    registers: [this.registry],
  });

  readonly workersLive = new Gauge({
    name: METRIC.workersLive,
    help: 'Workers holding a lease in the registry (SPEC §19), read when scraped.',
    registers: [this.registry],
  });

  readonly mcpTasks = new Counter<'status'>({
    name: METRIC.mcpTasksTotal,
    help: 'MCP tasks this API created or saw end, by status (working: created for a call still running; completed: answered; cancelled).',
    labelNames: ['status'],
    registers: [this.registry],
  });

  readonly unansweredLegs = new Counter<'fate'>({
    name: METRIC.unansweredLegsTotal,
    help: 'exec and wait calls whose leg did not answer within its budget plus the grace, by what the call did (rebuild, owe, lose, fail); each is counted, however few are logged.',
    labelNames: ['fate'],
    registers: [this.registry],
  });

  constructor(version: string, options: ProcessMetricsOptions = {}) {
    super(version, options);
    this.workersLive.set(0);
    for (const status of MCP_TASK_STATUSES) this.mcpTasks.inc({ status }, 0);
    for (const fate of UNANSWERED_LEG_FATES) this.unansweredLegs.inc({ fate }, 0);
    for (const queue of API_QUEUE_LABELS) {
      this.queueOldestWaitingAge.set({ queue }, 0);
      for (const state of QUEUE_JOB_STATES) this.queueJobs.set({ queue, state }, 0);
    }
  }

  /** An `exec` or `wait` whose leg did not answer in time, by what the call did with it. */
  unanswered(fate: UnansweredLegFateLabel): void {
    this.unansweredLegs.inc({ fate });
  }

  /** Sets one queue's gauges from its job counts and its oldest waiting job's creation time. */
  setQueue(queue: ApiQueueLabel, counts: Partial<Record<QueueJobState, number>>, oldestWaitingAt: number | null, now = Date.now()): void {
    for (const state of QUEUE_JOB_STATES) this.queueJobs.set({ queue, state }, counts[state] ?? 0);
    this.queueOldestWaitingAge.set({ queue }, oldestWaitingAt === null ? 0 : Math.max(0, now - oldestWaitingAt) / 1000);
  }
}

export function createApiMetrics(version: string, options: ProcessMetricsOptions = {}): ApiMetrics {
  return new ApiMetrics(version, options);
}

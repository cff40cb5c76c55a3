import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { METRIC } from './metric-names';

/** `Content-Type` of a Prometheus text exposition. */
export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** Refreshes scrape-time gauges (queue depths, pool state) just before they are read. */
export type ScrapeCollector = () => void | Promise<void>;

/** The per-tenant quotas of SPEC §10, as `codemode_tenant_limited_total{limit}` names them. */
export const TENANT_LIMITS = [
  'inflight',
  'streams',
  'rate',
  'shell_processes',
  'shell_calls',
  'parked_runs',
  'parked_bytes',
  'stored_bytes',
] as const;
export type TenantLimit = (typeof TENANT_LIMITS)[number];

export interface ProcessMetricsOptions {
  /** `CODEMODE_METRICS_TENANT_LABEL=1`: add a `tenant` label to quota refusals (one series per tenant). */
  tenantLabel?: boolean;
}

/** A slow collector (Redis not answering) must not hold the scrape past Prometheus' own timeout. */
const COLLECT_TIMEOUT_MS = 2_000;

/**
 * One process's registry: its own (never prom-client's global one, so two apps or two tests in
 * one process cannot collide), with the Node default metrics and `codemode_build_info`.
 */
export abstract class ProcessMetrics {
  readonly registry = new Registry();
  private readonly collectors: ScrapeCollector[] = [];
  private readonly tenantLimited: Counter<string>;
  private readonly tenantLabel: boolean;
  private readonly storeFailures = new Counter<'reason'>({
    name: METRIC.storeFailuresTotal,
    help: "Redis commands of this process's stores (event log, ledgers; not BullMQ's own) that failed: refused for memory (full) or not answered (unavailable).",
    labelNames: ['reason'],
    registers: [this.registry],
  });

  protected constructor(version: string, options: ProcessMetricsOptions = {}) {
    collectDefaultMetrics({ register: this.registry });
    const buildInfo = new Gauge({
      name: METRIC.buildInfo,
      help: 'Always 1; the running version is in the label.',
      labelNames: ['version'] as const,
      registers: [this.registry],
    });
    buildInfo.set({ version }, 1);
    this.tenantLabel = options.tenantLabel === true;
    this.tenantLimited = new Counter({
      name: METRIC.tenantLimitedTotal,
      help: 'Requests, cells and commands refused because their tenant was at a quota, by quota.',
      labelNames: this.tenantLabel ? ['limit', 'tenant'] : ['limit'],
      registers: [this.registry],
    });
    if (!this.tenantLabel) for (const limit of TENANT_LIMITS) this.tenantLimited.inc({ limit }, 0);
    for (const reason of ['full', 'unavailable']) this.storeFailures.inc({ reason }, 0);
  }

  /** Counts one Redis command that failed for memory (`full`) or for want of an answer (`unavailable`). */
  storeFailed(reason: 'full' | 'unavailable'): void {
    this.storeFailures.inc({ reason });
  }

  /** Counts one refusal at a tenant quota. */
  tenantLimitedOnce(limit: TenantLimit, tenant: string): void {
    this.tenantLimited.inc(this.tenantLabel ? { limit, tenant } : { limit });
  }

  /** Runs before every scrape. A collector that fails or times out leaves its gauges as they were. */
  addCollector(collector: ScrapeCollector): void {
    this.collectors.push(collector);
  }

  /** The exposition text, after every collector had its chance to refresh. */
  async scrape(): Promise<string> {
    await Promise.allSettled(this.collectors.map((collect) => withTimeout(collect)));
    return this.registry.metrics();
  }
}

async function withTimeout(collect: ScrapeCollector): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([collect(), new Promise<void>((resolve) => (timer = setTimeout(resolve, COLLECT_TIMEOUT_MS)))]);
  } finally {
    clearTimeout(timer);
  }
}

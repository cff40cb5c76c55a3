import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { METRIC } from './metric-names';

/** `Content-Type` of a Prometheus text exposition. */
export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** Refreshes scrape-time gauges (queue depths, pool state) just before they are read. */
export type ScrapeCollector = () => void | Promise<void>;

/** A slow collector (Redis not answering) must not hold the scrape past Prometheus' own timeout. */
const COLLECT_TIMEOUT_MS = 2_000;

/**
 * One process's registry: its own (never prom-client's global one, so two apps or two tests in
 * one process cannot collide), with the Node default metrics and `codemode_build_info`.
 */
export abstract class ProcessMetrics {
  readonly registry = new Registry();
  private readonly collectors: ScrapeCollector[] = [];

  protected constructor(version: string) {
    collectDefaultMetrics({ register: this.registry });
    const buildInfo = new Gauge({
      name: METRIC.buildInfo,
      help: 'Always 1; the running version is in the label.',
      labelNames: ['version'] as const,
      registers: [this.registry],
    });
    buildInfo.set({ version }, 1);
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

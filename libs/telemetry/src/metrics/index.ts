export * from './metric-names';
export * from './label-values';
export * from './buckets';
export {
  PROMETHEUS_CONTENT_TYPE,
  ProcessMetrics,
  TENANT_LIMITS,
  type ProcessMetricsOptions,
  type ScrapeCollector,
  type TenantLimit,
} from './process-metrics';
export { ApiMetrics, createApiMetrics, UNMATCHED_ROUTE } from './api-metrics';
export { WorkerMetrics, createWorkerMetrics, type WorkerGaugeReadings } from './worker-metrics';

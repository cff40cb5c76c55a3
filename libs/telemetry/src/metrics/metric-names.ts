/**
 * Every Prometheus metric the service exports, named once. Dashboards, alerts
 * and tests import these lists so a renamed metric cannot silently orphan them.
 * Units are in the names; labels are low-cardinality (never run or session ids).
 */
export const METRIC = {
  buildInfo: 'codemode_build_info',
  httpRequestDuration: 'codemode_http_request_duration_seconds',
  queueJobs: 'codemode_queue_jobs',
  queueOldestWaitingAge: 'codemode_queue_oldest_waiting_age_seconds',
  runsTotal: 'codemode_runs_total',
  runsFailedTotal: 'codemode_runs_failed_total',
  runDuration: 'codemode_run_duration_seconds',
  jobScheduleToStart: 'codemode_job_schedule_to_start_seconds',
  parkedRuns: 'codemode_parked_runs',
  parkedSlotsAvailable: 'codemode_parked_slots_available',
  parkedMemoryBytes: 'codemode_parked_memory_bytes',
  toolCallsTotal: 'codemode_tool_calls_total',
  toolCallDuration: 'codemode_tool_call_duration_seconds',
  resumesTotal: 'codemode_resumes_total',
  replayDuration: 'codemode_replay_duration_seconds',
  staleWritesRejectedTotal: 'codemode_stale_writes_rejected_total',
  recoveriesTotal: 'codemode_recoveries_total',
  leaseLapsesTotal: 'codemode_lease_lapses_total',
  storeFailuresTotal: 'codemode_store_failures_total',
  strandedRunsEndedTotal: 'codemode_stranded_runs_ended_total',
  shellSessions: 'codemode_shell_sessions',
  eventAppendDuration: 'codemode_event_append_duration_seconds',
  sandboxThreads: 'codemode_sandbox_threads',
  tenantLimitedTotal: 'codemode_tenant_limited_total',
  mcpServers: 'codemode_mcp_servers',
  approvalsTotal: 'codemode_approvals_total',
  approvalsPending: 'codemode_approvals_pending',
  toolCallsBlockedTotal: 'codemode_tool_calls_blocked_total',
  shellNotificationsTotal: 'codemode_shell_notifications_total',
  workersLive: 'codemode_workers_live',
  mcpTasksTotal: 'codemode_mcp_tasks_total',
  unansweredLegsTotal: 'codemode_unanswered_legs_total',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** Metrics served by the API's `GET /metrics` (besides the Node default metrics). */
export const API_METRIC_NAMES: readonly MetricName[] = [
  METRIC.buildInfo,
  METRIC.httpRequestDuration,
  METRIC.queueJobs,
  METRIC.queueOldestWaitingAge,
  METRIC.tenantLimitedTotal,
  METRIC.storeFailuresTotal,
  METRIC.workersLive,
  METRIC.mcpTasksTotal,
  METRIC.unansweredLegsTotal,
];

/** Metrics served by each worker's `GET /metrics` (besides the Node default metrics). */
export const WORKER_METRIC_NAMES: readonly MetricName[] = [
  METRIC.buildInfo,
  METRIC.runsTotal,
  METRIC.runsFailedTotal,
  METRIC.runDuration,
  METRIC.jobScheduleToStart,
  METRIC.parkedRuns,
  METRIC.parkedSlotsAvailable,
  METRIC.parkedMemoryBytes,
  METRIC.toolCallsTotal,
  METRIC.toolCallDuration,
  METRIC.resumesTotal,
  METRIC.replayDuration,
  METRIC.staleWritesRejectedTotal,
  METRIC.recoveriesTotal,
  METRIC.leaseLapsesTotal,
  METRIC.storeFailuresTotal,
  METRIC.strandedRunsEndedTotal,
  METRIC.shellSessions,
  METRIC.eventAppendDuration,
  METRIC.sandboxThreads,
  METRIC.tenantLimitedTotal,
  METRIC.mcpServers,
  METRIC.approvalsTotal,
  METRIC.approvalsPending,
  METRIC.toolCallsBlockedTotal,
  METRIC.shellNotificationsTotal,
];

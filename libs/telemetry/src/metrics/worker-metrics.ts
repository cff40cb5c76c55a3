import { Counter, Gauge, Histogram } from 'prom-client';
import { APPROVAL_OUTCOMES, type ApprovalOutcome, type ToolSource } from '@codemode/contracts';
import { FAST_BUCKETS, RUN_BUCKETS, SCHEDULE_BUCKETS } from './buckets';
import {
  FAILED_CODES,
  FAILURE_PHASES,
  failedRunLabels,
  RECOVERY_OUTCOMES,
  RESUME_PATHS,
  RUN_OUTCOMES,
  runOutcomeLabel,
  SANDBOX_THREAD_STATES,
  SHELL_NOTIFICATION_OUTCOMES,
  SHELL_SESSION_STATES,
  TOOL_OUTCOMES,
  TOOL_SOURCES,
  WORKER_QUEUE_LABELS,
  type RecoveryOutcome,
  type ResumePath,
  type RunOutcome,
  type ShellNotificationOutcome,
  type WorkerQueueLabel,
} from './label-values';
import { METRIC } from './metric-names';
import { ProcessMetrics, type ProcessMetricsOptions } from './process-metrics';

/** States of `codemode_mcp_servers` (SPEC §5), as the tools library names them. */
const MCP_SERVER_STATE_LABELS = ['connected', 'connecting', 'down'] as const;
type McpServerStateLabel = (typeof MCP_SERVER_STATE_LABELS)[number];

/** What the worker reads from its sandbox pool and shell registry when scraped. */
export interface WorkerGaugeReadings {
  sandbox: { busy: number; idle: number; starting: number; parked: number; parkedMemoryBytes: number };
  maxParked: number;
  shell: { running: number; finished: number };
}

/** A worker's metrics: its runs, queue claims, sandbox pool, tool calls, shell sessions and log writes. */
export class WorkerMetrics extends ProcessMetrics {
  readonly runsTotal = new Counter<'outcome'>({
    name: METRIC.runsTotal,
    help: 'Run answers recorded (each exec or wait leg), by outcome: completed, waiting, failed_<code>.',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly runsFailedTotal = new Counter<'code' | 'failure_phase'>({
    name: METRIC.runsFailedTotal,
    help: "Failed run answers (each exec or wait leg), by code and failure phase: input, guest and bridge are the model code's own, host the service's.",
    labelNames: ['code', 'failure_phase'],
    registers: [this.registry],
  });

  readonly runDuration = new Histogram<'outcome'>({
    name: METRIC.runDuration,
    help: 'Time from the start of a run leg (exec or wait) to its recorded answer.',
    labelNames: ['outcome'],
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });

  readonly jobScheduleToStart = new Histogram<'queue'>({
    name: METRIC.jobScheduleToStart,
    help: 'Time from a job being enqueued to this worker claiming it.',
    labelNames: ['queue'],
    buckets: SCHEDULE_BUCKETS,
    registers: [this.registry],
  });

  readonly parkedRuns = new Gauge({
    name: METRIC.parkedRuns,
    help: 'Runs parked (or being resumed) in this worker, read when scraped.',
    registers: [this.registry],
  });

  readonly parkedSlotsAvailable = new Gauge({
    name: METRIC.parkedSlotsAvailable,
    help: 'Parked-run slots still free in this worker, read when scraped.',
    registers: [this.registry],
  });

  readonly parkedMemoryBytes = new Gauge({
    name: METRIC.parkedMemoryBytes,
    help: 'Wasm memory of the VMs of runs parked (or being resumed) in this worker’s memory, in bytes (SPEC §10), read when scraped.',
    registers: [this.registry],
  });

  readonly toolCallsTotal = new Counter<'source' | 'outcome'>({
    name: METRIC.toolCallsTotal,
    help: 'Tool calls made by cells, by tool source and outcome.',
    labelNames: ['source', 'outcome'],
    registers: [this.registry],
  });

  readonly toolCallDuration = new Histogram<'source'>({
    name: METRIC.toolCallDuration,
    help: 'Duration of tool calls the worker answered itself, by tool source.',
    labelNames: ['source'],
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });

  readonly resumesTotal = new Counter<'path'>({
    name: METRIC.resumesTotal,
    help: 'Parked runs resumed, by path: owner (VM in memory) or replay (rebuilt from the log).',
    labelNames: ['path'],
    registers: [this.registry],
  });

  readonly replayDuration = new Histogram({
    name: METRIC.replayDuration,
    help: 'Time to rebuild a run by replaying its log.',
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });

  readonly staleWritesRejected = new Counter({
    name: METRIC.staleWritesRejectedTotal,
    help: 'Writes refused because their lease epoch was stale (another owner took the run).',
    registers: [this.registry],
  });

  readonly recoveriesTotal = new Counter<'outcome'>({
    name: METRIC.recoveriesTotal,
    help: 'Runs whose worker was gone, by what recovery did: replayed, rerun, lost, diverged, failed.',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly strandedRunsEnded = new Counter<'outcome'>({
    name: METRIC.strandedRunsEndedTotal,
    help: 'Runs a sweep ended a lease past their answer deadline because nothing else would: abandoned (still requested) or lost (its worker gone).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly leaseLapsesTotal = new Counter({
    name: METRIC.leaseLapsesTotal,
    help: 'Times this worker found its lease lapsed (Redis unreachable or the process stalled past the lease).',
    registers: [this.registry],
  });

  readonly shellSessions = new Gauge<'state'>({
    name: METRIC.shellSessions,
    help: 'Shell process sessions held by this worker, by state, read when scraped.',
    labelNames: ['state'],
    registers: [this.registry],
  });

  readonly eventAppendDuration = new Histogram({
    name: METRIC.eventAppendDuration,
    help: 'Duration of one event-log write (append script round trip), failed writes included.',
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });

  readonly sandboxThreads = new Gauge<'state'>({
    name: METRIC.sandboxThreads,
    help: 'Sandbox threads by state, read when scraped.',
    labelNames: ['state'],
    registers: [this.registry],
  });

  readonly mcpServers = new Gauge<'state'>({
    name: METRIC.mcpServers,
    help: 'Configured MCP servers of this worker by state (connected, connecting, down), read when scraped.',
    labelNames: ['state'],
    registers: [this.registry],
  });

  readonly approvalsTotal = new Counter<'decision'>({
    name: METRIC.approvalsTotal,
    help: 'Approvals of tool calls applied by this worker (SPEC §11), by decision: approve, deny, timeout.',
    labelNames: ['decision'],
    registers: [this.registry],
  });

  readonly approvalsPending = new Gauge({
    name: METRIC.approvalsPending,
    help: 'Tool calls of runs in this worker waiting for an approval decision.',
    registers: [this.registry],
  });

  readonly toolCallsBlockedTotal = new Counter({
    name: METRIC.toolCallsBlockedTotal,
    help: 'Tool calls refused by policy (SPEC §11 deny), never dispatched.',
    registers: [this.registry],
  });

  readonly shellNotificationsTotal = new Counter<'outcome'>({
    name: METRIC.shellNotificationsTotal,
    help: 'Exit notifications of background shell sessions to a session notifyUrl (SPEC §7), by outcome: delivered, failed (after its tries, or its address refused), dropped (too many in flight).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  constructor(version: string, options: ProcessMetricsOptions = {}) {
    super(version, options);
    for (const outcome of RUN_OUTCOMES) {
      this.runsTotal.inc({ outcome }, 0);
      this.runDuration.zero({ outcome });
    }
    for (const code of FAILED_CODES) for (const phase of FAILURE_PHASES) this.runsFailedTotal.inc({ code, failure_phase: phase }, 0);
    for (const queue of WORKER_QUEUE_LABELS) this.jobScheduleToStart.zero({ queue });
    for (const outcome of ['abandoned', 'lost']) this.strandedRunsEnded.inc({ outcome }, 0);
    for (const source of TOOL_SOURCES) {
      this.toolCallDuration.zero({ source });
      for (const outcome of TOOL_OUTCOMES) this.toolCallsTotal.inc({ source, outcome }, 0);
    }
    for (const path of RESUME_PATHS) this.resumesTotal.inc({ path }, 0);
    for (const outcome of RECOVERY_OUTCOMES) this.recoveriesTotal.inc({ outcome }, 0);
    this.setGauges({
      sandbox: { busy: 0, idle: 0, starting: 0, parked: 0, parkedMemoryBytes: 0 },
      maxParked: 0,
      shell: { running: 0, finished: 0 },
    });
    this.setMcpServers({});
    for (const decision of APPROVAL_OUTCOMES) this.approvalsTotal.inc({ decision }, 0);
    for (const outcome of SHELL_NOTIFICATION_OUTCOMES) this.shellNotificationsTotal.inc({ outcome }, 0);
  }

  /** An exit notification ended (SPEC §7). */
  shellNotified(outcome: ShellNotificationOutcome): void {
    this.shellNotificationsTotal.inc({ outcome });
  }

  /** MCP servers per state; a state left out counts zero (a worker without MCP servers shows zeros). */
  setMcpServers(counts: Partial<Record<McpServerStateLabel, number>>): void {
    for (const state of MCP_SERVER_STATE_LABELS) this.mcpServers.set({ state }, counts[state] ?? 0);
  }

  /** A run leg's answer was recorded. */
  runAnswered(
    result: { status: 'completed' | 'waiting' | 'failed'; code?: string; failurePhase?: string },
    startedAt: number,
    now = Date.now(),
  ): RunOutcome {
    const outcome = runOutcomeLabel(result);
    this.runsTotal.inc({ outcome });
    if (result.status === 'failed') this.runsFailedTotal.inc(failedRunLabels(result));
    this.runDuration.observe({ outcome }, seconds(now - startedAt));
    return outcome;
  }

  /** A job was claimed from `queue`; `enqueuedAt` and `claimedAt` are epoch milliseconds. */
  jobClaimed(queue: WorkerQueueLabel, enqueuedAt: number, claimedAt = Date.now()): void {
    this.jobScheduleToStart.observe({ queue }, seconds(claimedAt - enqueuedAt));
  }

  /** A tool call ended; `durationMs` is omitted for calls answered by the platform. */
  toolCalled(source: ToolSource, ok: boolean, durationMs?: number): void {
    this.toolCallsTotal.inc({ source, outcome: ok ? 'ok' : 'error' });
    if (durationMs !== undefined) this.toolCallDuration.observe({ source }, seconds(durationMs));
  }

  /** A call waiting for an approval got its decision. */
  approvalDecided(decision: ApprovalOutcome): void {
    this.approvalsTotal.inc({ decision });
  }

  recovered(outcome: RecoveryOutcome): void {
    this.recoveriesTotal.inc({ outcome });
  }

  resumed(path: ResumePath): void {
    this.resumesTotal.inc({ path });
  }

  setGauges(readings: WorkerGaugeReadings): void {
    const { sandbox, shell } = readings;
    this.parkedRuns.set(sandbox.parked);
    this.parkedSlotsAvailable.set(Math.max(0, readings.maxParked - sandbox.parked));
    this.parkedMemoryBytes.set(sandbox.parkedMemoryBytes);
    for (const state of SANDBOX_THREAD_STATES) this.sandboxThreads.set({ state }, sandbox[state]);
    for (const state of SHELL_SESSION_STATES) this.shellSessions.set({ state }, shell[state]);
  }
}

export function createWorkerMetrics(version: string, options: ProcessMetricsOptions = {}): WorkerMetrics {
  return new WorkerMetrics(version, options);
}

function seconds(ms: number): number {
  return Math.max(0, ms) / 1000;
}

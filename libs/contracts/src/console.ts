import { z } from 'zod';
import { NodeViewSchema } from './nodes';
import { RunViewSchema } from './run';

/** `limit` and `cursor` of the operator listings (`GET /v1/sessions`, `…/runs`), as query strings. */
export const ListPageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(512).optional(),
});
export type ListPageQuery = z.infer<typeof ListPageQuerySchema>;

/** Live runs of one session: `running` counts requested and running runs, `parked` waiting ones. */
export const LiveRunCountsSchema = z.object({ running: z.number().int(), parked: z.number().int() });
export type LiveRunCounts = z.infer<typeof LiveRunCountsSchema>;

/** One row of `GET /v1/sessions`. */
export const SessionSummarySchema = z.object({
  sessionId: z.string(),
  agentId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  runs: LiveRunCountsSchema,
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/** `GET /v1/sessions`: the tenant's sessions, newest activity first; `next` is the cursor of the next page. */
export const SessionListSchema = z.object({ sessions: z.array(SessionSummarySchema), next: z.string().nullable() });
export type SessionList = z.infer<typeof SessionListSchema>;

/** One row of `GET /v1/sessions/{sid}/runs`: the run projection without its result, and whether that result was replay-safe. */
export const RunSummarySchema = RunViewSchema.omit({ lastResult: true }).extend({ replaySafe: z.boolean().nullable() });
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** `GET /v1/sessions/{sid}/runs`: newest request first. */
export const RunListSchema = z.object({ runs: z.array(RunSummarySchema), next: z.string().nullable() });
export type RunList = z.infer<typeof RunListSchema>;

/** A live run of the caller's tenant, as the fleet view places it on its worker. */
export const FleetRunSchema = z.object({ sessionId: z.string(), runId: z.string(), title: z.string(), status: z.string() });
export type FleetRun = z.infer<typeof FleetRunSchema>;

/** What a worker reports about itself on each beat (null when the worker did not report). */
export const WorkerReportSchema = z.object({
  startedAt: z.string(),
  threads: z.number().int(),
  busyThreads: z.number().int(),
  parkedRuns: z.number().int(),
  /** Its configured slots: cells it runs at once, parked runs it keeps in memory (absent from workers older than these fields). */
  cellSlots: z.number().int().optional(),
  parkedSlots: z.number().int().optional(),
});
export type WorkerReport = z.infer<typeof WorkerReportSchema>;

/**
 * A worker's report as the fleet view shows it. In multi-tenant mode it is the configured capacity
 * only: occupancy (`busyThreads`, `parkedRuns`) counts every tenant's work, so it is left out (SPEC §10).
 */
export const FleetWorkerReportSchema = WorkerReportSchema.extend({
  busyThreads: z.number().int().optional(),
  parkedRuns: z.number().int().optional(),
});
export type FleetWorkerReport = z.infer<typeof FleetWorkerReportSchema>;

/** The fleet's configured capacity: live workers and the sums of their reported threads and slots. */
export const FleetCapacitySchema = z.object({
  workers: z.number().int(),
  threads: z.number().int(),
  cellSlots: z.number().int(),
  parkedSlots: z.number().int(),
});
export type FleetCapacity = z.infer<typeof FleetCapacitySchema>;

export const FleetWorkerSchema = z.object({
  workerId: z.string(),
  /** Milliseconds since the worker last renewed its lease. */
  leaseAgeMs: z.number().int(),
  report: FleetWorkerReportSchema.nullable(),
  /** The caller's tenant's runs this worker holds; other tenants' runs are never listed. */
  runs: z.object({ running: z.array(FleetRunSchema), parked: z.array(FleetRunSchema) }),
});
export type FleetWorker = z.infer<typeof FleetWorkerSchema>;

/** `GET /v1/fleet`: live workers, their capacity, the shared cell queue, and the tenant's live runs per worker. */
export const FleetViewSchema = z.object({
  workers: z.array(FleetWorkerSchema),
  capacity: FleetCapacitySchema,
  /** The shared cell queue; null in multi-tenant mode, where its depth tells of other tenants' work (SPEC §10). */
  queue: z
    .object({
      waiting: z.number().int(),
      active: z.number().int(),
      delayed: z.number().int(),
      oldestWaitingAt: z.string().nullable(),
    })
    .nullable(),
  /** The tenant's live runs held by no live worker (released, or their worker is gone). */
  unheld: z.array(FleetRunSchema),
  /** The tenant's paired nodes (SPEC §15). */
  nodes: z.array(NodeViewSchema),
});
export type FleetView = z.infer<typeof FleetViewSchema>;

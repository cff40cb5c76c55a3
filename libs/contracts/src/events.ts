import { z } from 'zod';

/** Every event type the log holds, defined once. */
export const EVENT_TYPES = [
  'session.configured',
  'exec.rejected',
  'run.requested',
  'run.started',
  'run.output',
  'run.parked',
  'run.resumed',
  'run.waited',
  'run.completed',
  'run.failed',
  'run.expired',
  'run.lost',
  'run.recovered',
  'run.released',
  'tool.called',
  'tool.settled',
  'tool.blocked',
  'approval.requested',
  'approval.decided',
  'store.committed',
  'tools.registered',
  'skills.registered',
  'shell.started',
  'shell.output',
  'shell.exited',
  'shell.removed',
  'shell.notified',
] as const;
export const EventTypeSchema = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventTypeSchema>;

/** Terminal run events: each run ends with exactly one (SPEC §3). */
export const TERMINAL_EVENT_TYPES = ['run.completed', 'run.failed', 'run.expired', 'run.lost'] as const;
export type TerminalEventType = (typeof TERMINAL_EVENT_TYPES)[number];

/** Why a run ended without a result of its own (the `reason` of `run.expired` / `run.lost`). */
export const RUN_END_REASONS = {
  expired: 'parked longer than snapshotTtlSeconds without a wait',
  ownerLost: 'the worker holding the run stopped renewing its lease',
} as const;

/** An event as REST serves it; `id` is the Redis stream id, usable as `after`. */
export const EventSchema = z.object({
  id: z.string(),
  type: EventTypeSchema,
  runId: z.string().optional(),
  at: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type Event = z.infer<typeof EventSchema>;

export const EventPageSchema = z.object({ events: z.array(EventSchema), next: z.string().nullable() });
export type EventPage = z.infer<typeof EventPageSchema>;

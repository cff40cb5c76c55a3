import { z } from 'zod';
import type { Event, EventType } from './events';
import type { ToolResult } from './jobs';
import { LimitsSchema } from './limits';
import { ApprovalDecisionSchema } from './policy';
import { LegJournalSchema, platformToolOutcome, RunRecoverySeedSchema, type ToolOutcome } from './replay';
import type { CodeModeResult, WaitingResult } from './result';
import {
  ShellExitedDataSchema,
  ShellNotifiedDataSchema,
  ShellOutputDataSchema,
  ShellRemovedDataSchema,
  ShellStartedDataSchema,
} from './shell';
import { ShellConfigSchema } from './shell-config';
import { ToolSourceSchema } from './tools';

/*
 * The `data` of every event type, as its writers write it (the Lua scripts in
 * libs/events/src/lua and the `EventLog`/`RunLedger` appends). Writers are checked against these
 * types at compile time; readers that need fields decode with `decodeEventData`.
 *
 * Results (`result` of run events) are the service's own answers, stored and served back
 * verbatim: they are typed, but decoding checks only that one is there with its status. Their
 * fields are result.ts's and may differ between builds; no reader of the log looks further.
 */

/** A recorded cell result: typed for writers, checked by its status only when decoded. */
function recordedResult<T extends CodeModeResult>(statuses: readonly T['status'][]) {
  return z.custom<T>(
    (value) =>
      typeof value === 'object' && value !== null && (statuses as readonly unknown[]).includes((value as { status?: unknown }).status),
  );
}
const AnyResultSchema = recordedResult<CodeModeResult>(['completed', 'waiting', 'failed']);

/** The `data` of `run.requested`, as the API writes it and the worker reads it back. */
export const RunRequestedDataSchema = z.object({
  title: z.string(),
  code: z.string(),
  restartSafe: z.boolean(),
  awaitResults: z.boolean(),
  limits: LimitsSchema,
  /**
   * The rest of the run's spec, as its session's settings gave it at the exec: with them the log
   * holds the whole spec, so a worker recovering the run needs no other source. Absent in logs
   * written before they were recorded.
   */
  shell: ShellConfigSchema.optional(),
  agentId: z.string().nullable().optional(),
  /** SPEC §15: the session had `agents: true` (recorded only then). */
  agents: z.boolean().optional(),
  idempotencyKey: z.string().optional(),
  /** SPEC §19: the id of the request that asked for the run (absent in logs written before it was recorded). */
  requestId: z.string().optional(),
});

/** The `{name, message}` a failed tool call rejects with in the guest. */
const ToolFailureSchema = z.object({ name: z.string(), message: z.string() });

/**
 * `tool.settled`: settled by the worker that made the call (its tool, duration and size, and for
 * a replay-safe run the outcome as the guest saw it: `result` / `failure`), or answered by the
 * platform (`POST …/tool-results`). Written only by `toolSettledData`.
 */
export const ToolSettledDataSchema = z.union([
  z.object({
    callId: z.string(),
    tool: z.string(),
    ok: z.literal(true),
    durationMs: z.number(),
    resultBytes: z.number(),
    result: z.unknown().optional(),
  }),
  z.object({
    callId: z.string(),
    tool: z.string(),
    ok: z.literal(false),
    durationMs: z.number(),
    /** The error's message, cut to 1000 characters. */
    error: z.string(),
    failure: ToolFailureSchema.optional(),
  }),
  z.object({
    callId: z.string(),
    ok: z.literal(true),
    source: z.literal('client'),
    answeredBy: z.literal('platform'),
    result: z.unknown().optional(),
  }),
  z.object({
    callId: z.string(),
    ok: z.literal(false),
    source: z.literal('client'),
    answeredBy: z.literal('platform'),
    failure: ToolFailureSchema.optional(),
  }),
]);
export type ToolSettledData = z.infer<typeof ToolSettledDataSchema>;

/** One schema per event type for its `data`. */
export const EVENT_DATA_SCHEMAS = {
  /** lua/configure-session.lua: the session's overrides after the patch. */
  'session.configured': z.object({
    agentId: z.string().nullable(),
    codeMode: LimitsSchema.partial(),
    shell: ShellConfigSchema.partial(),
    /** SPEC §15: written only when true (absent: false, as in logs written before it existed). */
    agents: z.boolean().optional(),
    /** SPEC §16: the session's own repairAttempts, when it has one. */
    repairAttempts: z.number().int().optional(),
    /** Absent in logs written before sessions had one. */
    notifyUrl: z.string().nullable().optional(),
  }),
  'exec.rejected': z.object({ call: z.enum(['exec', 'wait']), input: z.unknown(), result: AnyResultSchema }),
  'run.requested': RunRequestedDataSchema,
  'run.started': z.object({ workerId: z.string(), epoch: z.number(), recovery: RunRecoverySeedSchema.optional() }),
  /** Listed by the contract, written by nothing in this build: any object. */
  'run.output': z.record(z.string(), z.unknown()),
  'run.parked': z.object({
    result: recordedResult<WaitingResult>(['waiting']),
    expiresAt: z.string(),
    snapshotBytes: z.number(),
    /** Replay-safe runs: what the leg did, to rebuild it (SPEC §6). */
    journal: LegJournalSchema.optional(),
  }),
  /** lua/resume-run.lua: `input` is the wait's input. */
  'run.resumed': z.object({ workerId: z.string(), epoch: z.number(), input: z.unknown() }),
  /** lua/answer-idle-wait.lua (SPEC §18): a wait answered at once, without resuming the run; `input` is the wait's. */
  'run.waited': z.object({ input: z.unknown(), result: recordedResult<WaitingResult>(['waiting']) }),
  'run.completed': z.object({ result: AnyResultSchema }),
  'run.failed': z.object({ result: AnyResultSchema }),
  'run.expired': z.object({ reason: z.string() }),
  /** `result` when the run's owner ended it (a stalled recovery), none when it was found orphaned. */
  'run.lost': z.object({ reason: z.string(), result: AnyResultSchema.optional() }),
  /** lua/take-over-run.lua: `fromWorker` is the owner taken over from ('' for none). */
  'run.recovered': z.object({ workerId: z.string(), fromWorker: z.string(), epoch: z.number(), reason: z.string() }),
  'run.released': z.object({ workerId: z.string(), reason: z.string() }),
  /** `answeredBy` for a call only the platform answers; `input` for replay-safe runs. */
  'tool.called': z.object({
    callId: z.string(),
    tool: z.string(),
    source: ToolSourceSchema,
    inputBytes: z.number(),
    answeredBy: z.literal('platform').optional(),
    input: z.unknown().optional(),
    /** SPEC §15: a `nodes.invoke` call's node (the id it resolved to) and command. */
    node: z.string().optional(),
    command: z.string().optional(),
    /** SPEC §16: `<runId>:<n>`, the same on every replay of the run. */
    callKey: z.string().optional(),
  }),
  'tool.settled': ToolSettledDataSchema,
  'tool.blocked': z.object({ callId: z.string(), tool: z.string() }),
  'approval.requested': z.object({
    approvalId: z.string(),
    runId: z.string(),
    callId: z.string(),
    tool: z.string(),
    input: z.unknown(),
    endpoint: z.string().optional(),
  }),
  'approval.decided': z.object({
    approvalId: z.string(),
    runId: z.string(),
    callId: z.string(),
    tool: z.string(),
    ...ApprovalDecisionSchema.shape,
  }),
  /** lua/commit-store.lua: `set` maps keys to their values, `deleted` lists removed keys. */
  'store.committed': z.object({ runId: z.string(), set: z.record(z.string(), z.unknown()), deleted: z.array(z.string()) }),
  /** Names and count only: endpoints and schemas are not in the log. */
  'tools.registered': z.object({ tools: z.array(z.string()), count: z.number() }),
  /** SPEC §15: the session's skills replaced; names and count only, descriptions and contents live in the projection keys. */
  'skills.registered': z.object({ skills: z.array(z.string()), count: z.number() }),
  'shell.started': ShellStartedDataSchema,
  'shell.output': ShellOutputDataSchema,
  'shell.exited': ShellExitedDataSchema,
  'shell.removed': ShellRemovedDataSchema,
  'shell.notified': ShellNotifiedDataSchema,
} satisfies { [T in EventType]: z.ZodType };

/** The `data` of an event of type `T`. */
export type EventData<T extends EventType> = z.infer<(typeof EVENT_DATA_SCHEMAS)[T]>;

/** An event with its data typed by its type (`Event` as REST serves it, one member per type). */
export type TypedEvent = { [T in EventType]: Omit<Event, 'type' | 'data'> & { type: T; data: EventData<T> } }[EventType];

/**
 * The one decoder of event data: `data` as the schema of `type` reads it, or null when it does
 * not parse. Null, never a throw: a log may hold what an older build (or a bug) wrote, and a
 * reader must go on reading; one that needs the fields treats such an event as recording none.
 * The REST event feed does not decode: it serves every event's data as stored.
 */
export function decodeEventData<T extends EventType>(type: T, data: unknown): EventData<T> | null {
  const schema: z.ZodType = EVENT_DATA_SCHEMAS[type];
  const parsed = schema.safeParse(data);
  return parsed.success ? (parsed.data as EventData<T>) : null;
}

/** Who settled a tool call: the worker that made it, or the platform that answered it. */
export type ToolSettler = { callId: string; tool: string; durationMs: number } | { callId: string; answeredBy: 'platform' };

/**
 * The one encoder of `tool.settled` data. `keepOutcome` (replay-safe runs, and every platform
 * answer: SPEC §12) records the outcome as the guest sees it, so a replay or a restore answers
 * the call the same way; `settledOutcome` reads it back.
 */
export function toolSettledData(by: ToolSettler, outcome: ToolOutcome, keepOutcome: boolean): ToolSettledData {
  if ('answeredBy' in by) {
    const platform = { source: 'client', answeredBy: 'platform' } as const;
    return outcome.ok
      ? { callId: by.callId, ok: true, ...platform, ...(keepOutcome ? { result: outcome.value ?? null } : {}) }
      : { callId: by.callId, ok: false, ...platform, ...(keepOutcome ? { failure: outcome.error } : {}) };
  }
  const { callId, tool, durationMs } = by;
  if (outcome.ok) {
    const resultBytes = new TextEncoder().encode(JSON.stringify(outcome.value) ?? 'null').length;
    return { callId, tool, ok: true, durationMs, resultBytes, ...(keepOutcome ? { result: outcome.value ?? null } : {}) };
  }
  const error = outcome.error.message.slice(0, 1000);
  return { callId, tool, ok: false, durationMs, error, ...(keepOutcome ? { failure: outcome.error } : {}) };
}

/** The `tool.settled` data that records a platform's answer (with its outcome for replay-safe runs). */
export function platformSettledData(result: ToolResult, restartSafe: boolean): ToolSettledData {
  return toolSettledData({ callId: result.id, answeredBy: 'platform' }, platformToolOutcome(result), restartSafe);
}

/** The one decoder of a `tool.settled` outcome: as the guest saw it, or null when the log did not keep it. */
export function settledOutcome(data: ToolSettledData): ToolOutcome | null {
  if (data.ok) return 'result' in data ? { ok: true, value: data.result ?? null } : null;
  return data.failure ? { ok: false, error: { name: data.failure.name, message: data.failure.message } } : null;
}

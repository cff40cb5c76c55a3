import { z } from 'zod';

/** Shell exec and process shapes (SPEC §7). */
/**
 * Where the session workspace appears inside every shell sandbox (SPEC §10); answers show paths
 * under it, and the file tools read absolute paths under it as workspace paths too.
 */
export const WORKSPACE_MOUNT = '/workspace';

/**
 * The scope shell process sessions live in (SPEC §7): the session's `agentId` when it has one, so
 * every session of one agent sees the same processes, else the session itself.
 */
export function shellScopeKey(sessionId: string, agentId: string | null | undefined): string {
  return agentId ? `agent:${agentId}` : `session:${sessionId}`;
}

/** The `agentId` a scope key (`shellScopeKey`) was made of; null for a session's own scope. */
export function agentIdOfScopeKey(scopeKey: string): string | null {
  return scopeKey.startsWith('agent:') ? scopeKey.slice('agent:'.length) : null;
}

export const ShellStatusSchema = z.enum(['running', 'completed', 'failed', 'lost']);
export type ShellStatus = z.infer<typeof ShellStatusSchema>;

/** The ten `process` actions, in the order the invalid-action error lists them. */
export const PROCESS_ACTIONS = ['list', 'poll', 'log', 'write', 'send-keys', 'submit', 'paste', 'kill', 'clear', 'remove'] as const;
export type ProcessAction = (typeof PROCESS_ACTIONS)[number];

/** Body of `shell/exec` (and of the shell `exec` tool inside a cell). */
export const ShellExecInputSchema = z.object({
  title: z.string().optional(),
  command: z.string(),
  workdir: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  yieldMs: z.number().optional(),
  background: z.boolean().optional(),
  timeoutSeconds: z.number().optional(),
  pty: z.boolean().optional(),
  awaitResults: z.boolean().optional(),
  /** Where it runs (SPEC §7): `auto`, `sandbox` and `gateway` here; `node` on a paired node (`node`). */
  host: z.string().optional(),
  node: z.string().optional(),
  /** Refused: this service never runs a command elevated. */
  elevated: z.boolean().optional(),
});
export type ShellExecInput = z.infer<typeof ShellExecInputSchema>;

const POLL_TIMEOUT_ERROR = 'must be a number of milliseconds or an integer string';
/**
 * `process poll`'s `timeout`: milliseconds as a number or an integer string (`"3000"`), as
 * models often write it. Anything else is a field of the wrong type.
 */
export const PollTimeoutSchema = z.union([z.number(), z.string().regex(/^\s*[+-]?\d+\s*$/, { error: POLL_TIMEOUT_ERROR })], {
  error: POLL_TIMEOUT_ERROR,
});

/**
 * Body of `process`. `action` is a plain string on purpose: an unknown action is a tool-level
 * outcome (`Invalid process action. …`, answered 200), not a malformed body (400).
 */
export const ProcessInputSchema = z.object({
  action: z.string(),
  sessionId: z.string().optional(),
  data: z.string().optional(),
  eof: z.boolean().optional(),
  keys: z.array(z.string()).optional(),
  hex: z.array(z.string()).optional(),
  literal: z.string().optional(),
  text: z.string().optional(),
  bracketed: z.boolean().optional(),
  offset: z.number().optional(),
  limit: z.number().optional(),
  timeout: PollTimeoutSchema.optional(),
});
export type ProcessInput = z.infer<typeof ProcessInputSchema>;

/** Any tool-level error: the message is the answer's `text`. */
export const ShellFailedDetailsSchema = z.object({ status: z.literal('failed') });

/** A foreground command that ended before its yield. */
export const ShellFinishedDetailsSchema = z.object({
  status: z.enum(['completed', 'failed']),
  exitCode: z.number().int().nullable(),
  exitSignal: z.string().optional(),
  timedOut: z.boolean().optional(),
  aggregated: z.string(),
  durationMs: z.number(),
  cwd: z.string(),
});

/** A command still running after its yield, or started with `background:true`. */
export const ShellRunningDetailsSchema = z.object({
  status: z.literal('running'),
  sessionId: z.string(),
  pid: z.number().int(),
  startedAt: z.number(),
  tail: z.string(),
});

/** Input-wait state of a running session (`list`, `poll`, `log`). */
export const ShellInputStateSchema = z.object({
  stdinWritable: z.boolean(),
  waitingForInput: z.boolean(),
  idleMs: z.number(),
  lastOutputAt: z.number(),
});

/** One row of `list`: running rows add pid and input state, finished rows their exit. */
export const ShellSessionSummarySchema = z.object({
  sessionId: z.string(),
  status: ShellStatusSchema,
  startedAt: z.number(),
  runtimeMs: z.number(),
  cwd: z.string(),
  command: z.string(),
  name: z.string().optional(),
  tail: z.string(),
  truncated: z.boolean(),
  pid: z.number().int().optional(),
  stdinWritable: z.boolean().optional(),
  waitingForInput: z.boolean().optional(),
  idleMs: z.number().optional(),
  lastOutputAt: z.number().optional(),
  exitCode: z.number().int().nullable().optional(),
  exitSignal: z.string().optional(),
  timedOut: z.boolean().optional(),
  endedAt: z.number().optional(),
});
export type ShellSessionSummary = z.infer<typeof ShellSessionSummarySchema>;

export const ProcessListDetailsSchema = z.object({
  status: z.literal('completed'),
  sessions: z.array(ShellSessionSummarySchema),
});

/** `poll`/`log` of a running session, and the input actions (`write`, `send-keys`, …). */
export const ProcessRunningDetailsSchema = ShellInputStateSchema.partial().extend({
  status: z.literal('running'),
  sessionId: z.string(),
  name: z.string().optional(),
  aggregated: z.string().optional(),
  totalLines: z.number().int().optional(),
  totalChars: z.number().int().optional(),
  truncated: z.boolean().optional(),
  /** On a `poll` that brought no new output: when to poll again (5000, 10000, 30000, then 60000). */
  retryInMs: z.number().int().optional(),
});

/** `poll`/`log` of a finished (or lost) session. */
export const ProcessFinishedDetailsSchema = z.object({
  status: z.enum(['completed', 'failed', 'lost']),
  sessionId: z.string(),
  name: z.string().optional(),
  exitCode: z.number().int().nullable().optional(),
  exitSignal: z.string().optional(),
  timedOut: z.boolean().optional(),
  aggregated: z.string().optional(),
  totalLines: z.number().int().optional(),
  totalChars: z.number().int().optional(),
  truncated: z.boolean().optional(),
});

/** `kill`, `clear`, `remove`: the action itself succeeded. */
export const ProcessDoneDetailsSchema = z.object({
  status: z.literal('completed'),
  sessionId: z.string(),
  name: z.string().optional(),
});

export const ShellDetailsSchema = z.union([
  ShellFailedDetailsSchema,
  ShellFinishedDetailsSchema,
  ShellRunningDetailsSchema,
  ProcessListDetailsSchema,
  ProcessRunningDetailsSchema,
  ProcessFinishedDetailsSchema,
  ProcessDoneDetailsSchema,
]);
export type ShellDetails = z.infer<typeof ShellDetailsSchema>;

/** Every `shell/exec` and `process` answer, errors included (SPEC §7). */
export const ShellAnswerSchema = z.object({ text: z.string(), details: ShellDetailsSchema });
export type ShellAnswer = z.infer<typeof ShellAnswerSchema>;

/** `shell.started` event data: enough to list the session after its worker is gone. */
export const ShellStartedDataSchema = z.object({
  sessionId: z.string(),
  scope: z.string(),
  command: z.string(),
  cwd: z.string(),
  pid: z.number().int(),
  pty: z.boolean(),
  startedAt: z.number(),
  backgrounded: z.boolean(),
});
export type ShellStartedData = z.infer<typeof ShellStartedDataSchema>;

/** `shell.output` event data: one coalesced chunk (at most 8 KiB of text). */
export const ShellOutputDataSchema = z.object({
  sessionId: z.string(),
  scope: z.string(),
  stream: z.enum(['stdout', 'stderr']),
  text: z.string(),
});
export type ShellOutputData = z.infer<typeof ShellOutputDataSchema>;

/** `shell.exited` event data. `droppedChars`: output not recorded once the per-session budget was spent. */
export const ShellExitedDataSchema = z.object({
  sessionId: z.string(),
  scope: z.string(),
  status: z.enum(['completed', 'failed']),
  exitCode: z.number().int().nullable(),
  exitSignal: z.string().nullable(),
  timedOut: z.boolean(),
  startedAt: z.number(),
  endedAt: z.number(),
  durationMs: z.number(),
  backgrounded: z.boolean(),
  droppedChars: z.number().int(),
  /** The timeout the session ran with, named by the timed-out guidance (absent in older logs). */
  timeoutSeconds: z.number().optional(),
  /** Why the service stopped it, when it did: the workspace limit's message (SPEC §10). */
  stoppedReason: z.string().optional(),
});
export type ShellExitedData = z.infer<typeof ShellExitedDataSchema>;

/** `shell.removed` event data: `clear`/`remove` took the session out of its scope for good. */
export const ShellRemovedDataSchema = z.object({ sessionId: z.string(), scope: z.string() });
export type ShellRemovedData = z.infer<typeof ShellRemovedDataSchema>;

/**
 * `shell.notified` event data: how the exit notification of a background session went (SPEC §7).
 * `attempts` is 0 when nothing was sent (the address was refused, or too many were in flight).
 */
export const ShellNotifiedDataSchema = z.object({
  sessionId: z.string(),
  scope: z.string(),
  status: z.enum(['delivered', 'failed']),
  attempts: z.number().int(),
  /** The last answer's HTTP status, when one came. */
  httpStatus: z.number().int().optional(),
  /** Why it failed; never the URL or the secret. */
  error: z.string().optional(),
});
export type ShellNotifiedData = z.infer<typeof ShellNotifiedDataSchema>;

/** The JSON POSTed to a session's `notifyUrl` when a background shell session ends (SPEC §7). */
export const ShellExitNotificationSchema = z.object({
  /** The Code Mode session. */
  sessionId: z.string(),
  agentId: z.string().nullable(),
  /** The shell process session that ended. */
  processSessionId: z.string(),
  /** As `process list` reports it. (A session lost with its worker has no exit to notify.) */
  status: z.enum(['completed', 'failed']),
  exitCode: z.number().int().nullable(),
  exitSignal: z.string().optional(),
  timedOut: z.boolean().optional(),
  /** The last 2000 characters of its output, as the running answer's `tail`. */
  tail: z.string(),
});
export type ShellExitNotification = z.infer<typeof ShellExitNotificationSchema>;

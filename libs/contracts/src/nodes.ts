import { z } from 'zod';

/**
 * Paired nodes (SPEC §15): processes that connect to the API with a key of the tenant, advertise
 * commands and serve invocations. The bounds keep one tenant's nodes small: a node record is read
 * on every `nodes.*` call of the tenant's cells.
 */
export const NODE_LIMITS = {
  /** Nodes a tenant may have paired (connected or not). */
  perTenant: 32,
  nameChars: 64,
  platformChars: 64,
  commands: 64,
  commandChars: 128,
} as const;

/** `nd_<uuid>`. */
export const NODE_ID_PATTERN = /^nd_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A command name: `device.status`, `fs.listDir`, `system.run`, or a `--command` of the node. */
export const NODE_COMMAND_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Printable, no leading/trailing space: a display name a model types back into `nodes.get`. */
const NODE_NAME_PATTERN = /^[^\s\p{Cc}](?:[^\p{Cc}]*[^\s\p{Cc}])?$/u;

/** The built-in commands of the reference node (`codemode node`). */
export const NODE_COMMANDS = { status: 'device.status', listDir: 'fs.listDir', run: 'system.run' } as const;

/** `POST /v1/nodes/connect`: who the node is. `id` + `secret` re-establish a node paired before. */
export const NodeConnectInputSchema = z
  .object({
    name: z.string().min(1).max(NODE_LIMITS.nameChars).regex(NODE_NAME_PATTERN, 'must be printable, without leading or trailing spaces'),
    platform: z.string().min(1).max(NODE_LIMITS.platformChars),
    commands: z
      .array(z.string().min(1).max(NODE_LIMITS.commandChars).regex(NODE_COMMAND_PATTERN))
      .max(NODE_LIMITS.commands)
      .refine((list) => new Set(list).size === list.length, 'must not repeat a command'),
    id: z.string().regex(NODE_ID_PATTERN).optional(),
    secret: z.string().min(16).max(128).optional(),
  })
  .strict();
export type NodeConnectInput = z.infer<typeof NodeConnectInputSchema>;

/** A node as `GET /v1/nodes` and `nodes.list()` show it. */
export const NodeViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  platform: z.string(),
  connected: z.boolean(),
  commands: z.array(z.string()),
  connectedAt: z.string().optional(),
  lastSeenAt: z.string(),
});
export type NodeView = z.infer<typeof NodeViewSchema>;

/** The first event of a node's connection: its id, and the secret that lets it reconnect as itself. */
export const NodePairedSchema = z.object({ id: z.string(), secret: z.string() });
export type NodePaired = z.infer<typeof NodePairedSchema>;

/** An invocation as the node receives it (the `invoke` event of its connection). */
export const NodeInvocationSchema = z.object({
  invocationId: z.string(),
  command: z.string(),
  params: z.unknown(),
  timeoutMs: z.number().int().positive(),
});
export type NodeInvocation = z.infer<typeof NodeInvocationSchema>;

/** `POST /v1/nodes/{id}/results`: a node's answer to one invocation. */
export const NodeResultInputSchema = z
  .object({
    invocationId: z.string().min(1).max(64),
    ok: z.boolean(),
    value: z.unknown().optional(),
    error: z.string().max(4096).optional(),
  })
  .strict();
export type NodeResultInput = z.infer<typeof NodeResultInputSchema>;

/** What a worker gets back for an invocation (over its answer channel). */
export type NodeAnswer = { ok: true; value: unknown } | { ok: false; error: string };

/** SPEC §15's errors, exact. */
export const nodeErrors = {
  unknown: (idOrName: string) => `unknown node: ${idOrName}`,
  notConnected: (name: string) => `node ${name} is not connected.`,
  noCommand: (name: string, command: string) => `node ${name} does not advertise command ${command}.`,
  timedOut: (name: string, command: string, ms: number) => `node ${name} did not answer ${command} within ${ms} ms.`,
  /** SPEC §7: a shell command on a node runs in the foreground within the call's timeout. */
  background: 'background commands are not supported on nodes.',
} as const;

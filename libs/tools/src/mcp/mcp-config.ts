import { z } from 'zod';
import { McpConfigError } from '../errors';

/**
 * Deployment MCP servers, as `CODEMODE_MCP_SERVERS` holds them (the app reads the variable and
 * passes the string). Each server is either a stdio command or a streamable-HTTP URL. Unknown keys
 * are refused so a typo (`comand`) fails at boot instead of silently dropping a server.
 */

/** SPEC §17: the range of a server's `timeoutMs`. */
export const MIN_MCP_CALL_TIMEOUT_MS = 100;
export const MAX_MCP_CALL_TIMEOUT_MS = 600_000;

const stringMap = z.record(z.string(), z.string({ error: 'must be a string' }));

export const McpServerConfigSchema = z
  .strictObject({
    name: z
      .string({ error: 'must be a string' })
      .max(64, { error: 'must be at most 64 characters' })
      .refine((name) => name.trim() !== '', { error: 'must not be blank' }),
    command: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).optional(),
    args: z.array(z.string({ error: 'must be a string' }), { error: 'must be an array of strings' }).optional(),
    env: stringMap.optional(),
    cwd: z.string({ error: 'must be a string' }).optional(),
    url: z
      .string({ error: 'must be a string' })
      .refine(
        (value) => {
          try {
            const { protocol } = new URL(value);
            return protocol === 'http:' || protocol === 'https:';
          } catch {
            return false;
          }
        },
        { error: 'must be an http or https URL' },
      )
      .optional(),
    headers: stringMap.optional(),
    /** SPEC §16: tools of this server that take effect once per callKey, whatever their annotations say. */
    idempotentTools: z
      .array(z.string({ error: 'must be an array of tool names' }).min(1, { error: 'must not hold an empty tool name' }), {
        error: 'must be an array of tool names',
      })
      .optional(),
    /** SPEC §17: the deadline of each `tools/call` to this server (ms); without it, `DEFAULT_MCP_CALL_TIMEOUT_MS`. */
    timeoutMs: z
      .number({ error: 'must be a number of milliseconds' })
      .int({ error: 'must be a whole number of milliseconds' })
      .min(MIN_MCP_CALL_TIMEOUT_MS, { error: `must be at least ${MIN_MCP_CALL_TIMEOUT_MS}` })
      .max(MAX_MCP_CALL_TIMEOUT_MS, { error: `must be at most ${MAX_MCP_CALL_TIMEOUT_MS}` })
      .optional(),
    /** The tenants that see this server (SPEC §10); without it, every tenant does. */
    tenants: z
      .array(
        z
          .string({ error: 'must be an array of tenant ids' })
          .min(1, { error: 'must not hold an empty tenant id' })
          .max(128, { error: 'must hold tenant ids of at most 128 characters' }),
        { error: 'must be an array of tenant ids' },
      )
      .min(1, { error: 'must name at least one tenant; leave it out to show the server to every tenant' })
      .optional(),
  })
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'exactly one of command (stdio) or url (streamable HTTP) is required' });
    }
    for (const key of ['args', 'env', 'cwd'] as const) {
      if (server.url !== undefined && server[key] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'applies to stdio servers (command) only' });
      }
    }
    if (server.command !== undefined && server.headers !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['headers'], message: 'applies to HTTP servers (url) only' });
    }
  });
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

export const McpServersConfigSchema = z
  .array(McpServerConfigSchema, { error: 'must be an array of servers' })
  .superRefine((servers, ctx) => {
    const seen = new Set<string>();
    servers.forEach((server, index) => {
      if (seen.has(server.name)) {
        ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `duplicate server name ${server.name}` });
      }
      seen.add(server.name);
    });
  });

/**
 * Accepts the array form `[{name, command|url, …}]`, and the map form most MCP clients write
 * (`{"github": {command, …}}`, optionally wrapped in `{"mcpServers": …}`), the key becoming `name`.
 */
function normalize(value: unknown): unknown {
  if (Array.isArray(value) || value === null || typeof value !== 'object') {
    return value;
  }
  const record = value as Record<string, unknown>;
  const servers = Object.keys(record).length === 1 && 'mcpServers' in record ? record.mcpServers : record;
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) {
    return servers;
  }
  return Object.entries(servers as Record<string, unknown>).map(([name, server]) =>
    server !== null && typeof server === 'object' && !Array.isArray(server) ? { name, ...server } : server,
  );
}

function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
    .replace(/^\./u, '');
}

/**
 * Parses an MCP servers config string. Blank means no servers.
 * @param source the variable's name, quoted in errors.
 * @throws McpConfigError naming the bad field, e.g. `CODEMODE_MCP_SERVERS[0].url: must be an http or https URL`.
 */
export function parseMcpServersConfig(json: string | undefined, source = 'CODEMODE_MCP_SERVERS'): McpServerConfig[] {
  if (json === undefined || json.trim() === '') {
    return [];
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new McpConfigError(`${source} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = McpServersConfigSchema.safeParse(normalize(value));
  if (parsed.success) {
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  const where = issue ? fieldPath(issue.path) : '';
  const message =
    issue?.code === 'unrecognized_keys' ? `unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')}` : issue?.message;
  throw new McpConfigError(`${source}${where.startsWith('[') || where === '' ? '' : '.'}${where}: ${message ?? 'is invalid'}`);
}

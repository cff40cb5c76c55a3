/**
 * When to try a lost MCP server again (SPEC §5): the first retry within 1 s, then doubling, never
 * more than 10 s apart. Retries never give up: a server that comes back is picked up again.
 */

/** What an MCP server is doing, as `codemode_mcp_servers{state}` counts servers. */
export type McpServerState = 'connected' | 'connecting' | 'down';

/** Every state, in the order metrics and health list them. */
export const MCP_SERVER_STATES: readonly McpServerState[] = ['connected', 'connecting', 'down'];

export interface McpReconnectOptions {
  /** Delay before the first retry after a loss or a failed first connect. @default 500 */
  readonly initialDelayMs?: number;
  /** Longest delay between two attempts. @default 10000 */
  readonly maxDelayMs?: number;
}

export const DEFAULT_MCP_RECONNECT_INITIAL_DELAY_MS = 500;
export const DEFAULT_MCP_RECONNECT_MAX_DELAY_MS = 10_000;

/**
 * Delay before retry number `retry` (1 for the first) since the server was last connected: the
 * initial delay doubled each time, capped; `random` (0–1) shortens it by up to a fifth so workers
 * that lost the same server do not all knock at once, and never lengthens it past the cap.
 */
export function reconnectDelayMs(retry: number, options: McpReconnectOptions = {}, random: number = Math.random()): number {
  const initial = options.initialDelayMs ?? DEFAULT_MCP_RECONNECT_INITIAL_DELAY_MS;
  const max = options.maxDelayMs ?? DEFAULT_MCP_RECONNECT_MAX_DELAY_MS;
  const base = Math.min(max, initial * 2 ** Math.min(30, Math.max(0, retry - 1)));
  return Math.round(base * (1 - 0.2 * Math.min(1, Math.max(0, random))));
}

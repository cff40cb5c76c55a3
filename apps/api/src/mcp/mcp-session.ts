import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { INVALID_SESSION_ID_MESSAGE, SESSION_ID_PATTERN } from '@codemode/contracts';

/** The header that names the Code Mode session of an MCP request (SPEC §14). */
export const CODEMODE_SESSION_HEADER = 'x-codemode-session';
export const MCP_SESSION_HEADER = 'mcp-session-id';
/** The MCP session ids this server issues: a UUID, so that `mcp-<id>` is a valid session id. */
const MCP_SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const NO_SESSION_ERROR =
  'no Code Mode session for this MCP request: send the Mcp-Session-Id the initialize answer gave, or X-Codemode-Session: <session id>.';
export const BAD_MCP_SESSION_ERROR = 'Mcp-Session-Id is not one this server issues; initialize again for a new one.';

/**
 * Which Code Mode session an MCP request works in (SPEC §14): `X-Codemode-Session` when sent, else
 * `mcp-<MCP session id>`. An initialize request is issued a new MCP session id (`issued`), whose
 * session the client's next requests name. Nothing is stored: every API replica derives the same
 * answer from the headers, and the session is its tenant's (a tenant that sends another tenant's
 * MCP session id names a session of its own of that name).
 */
export type McpSessionAnswer = { ok: true; sessionId: string; issued?: string } | { ok: false; status: 400 | 404; error: string };

export function mcpSession(headers: IncomingHttpHeaders, initialize: boolean, newId: () => string = randomUUID): McpSessionAnswer {
  const issued = initialize ? newId() : undefined;
  const named = single(headers[CODEMODE_SESSION_HEADER]);
  if (named !== undefined) {
    return SESSION_ID_PATTERN.test(named)
      ? { ok: true, sessionId: named, ...(issued ? { issued } : {}) }
      : { ok: false, status: 400, error: INVALID_SESSION_ID_MESSAGE };
  }
  if (issued !== undefined) return { ok: true, sessionId: `mcp-${issued}`, issued };
  const mcpId = single(headers[MCP_SESSION_HEADER]);
  if (mcpId === undefined) return { ok: false, status: 400, error: NO_SESSION_ERROR };
  if (!MCP_SESSION_ID.test(mcpId)) return { ok: false, status: 404, error: BAD_MCP_SESSION_ERROR };
  return { ok: true, sessionId: `mcp-${mcpId}` };
}

function single(value: string | string[] | undefined): string | undefined {
  const one = Array.isArray(value) ? value[0] : value;
  return one === undefined || one === '' ? undefined : one;
}

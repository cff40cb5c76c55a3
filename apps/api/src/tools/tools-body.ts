import { ClientToolsPutSchema, type ClientTool, type TenantTool, type ToolsView } from '@codemode/contracts';
import type { ToolDefinition } from '@codemode/catalog';
import { SessionToolCatalog, type McpServerScope } from '@codemode/tools';
import { BODY_NOT_JSON_ERROR } from '../http/request-context';
import type { TenantToolList } from './tenant-tool-lists';

/** What a session's catalog view is built from besides its client tools. */
export interface ToolsViewContext {
  tenant: string;
  mcp: { tools: unknown[]; servers: unknown[] };
  limits: { timeoutMs: number; maxOutputBytes: number };
  /** The tenant's tools (SPEC §18), before the session's client tools, which shadow them. */
  tenantTools: Pick<TenantToolList, 'version' | 'tools' | 'json'>;
}

/**
 * A `ToolsViewContext` as a body thread is sent it: the tenant's tools as their shared JSON bytes
 * (`TenantToolList.json`), never the objects (cloning them held the event loop ~0.5 s at the caps).
 */
export type ThreadToolsViewContext = Omit<ToolsViewContext, 'tenantTools'> & { tenantTools: { version: string; json: Uint8Array } };

/** What the event loop posts to a body thread. */
export function threadContext(context: ToolsViewContext): ThreadToolsViewContext {
  const { version, json } = context.tenantTools;
  return { ...context, tenantTools: { version, json } };
}

/** On the body thread: the context with the tenant's tools parsed from their bytes. */
export function contextOnThread(context: ThreadToolsViewContext): ToolsViewContext {
  const { version, json } = context.tenantTools;
  return { ...context, tenantTools: { version, json, tools: JSON.parse(Buffer.from(json).toString('utf8')) as TenantTool[] } };
}

/** A registered tool as the event loop sees it: enough for the endpoint check, never its schemas. */
export type ToolEndpoint = Pick<ClientTool, 'name' | 'endpoint'>;

/**
 * A checked `PUT /tools` body. Registrations reach 16 MiB, so the tools themselves stay where they
 * were parsed (a body thread, for a large body): the event loop gets their names and endpoints,
 * the JSON it stores, and the view it answers with. Checked on a body thread (`Encoded` is
 * `Uint8Array`), the JSON and the view come as UTF-8 bytes (see `ClientToolsLedger.putJson`).
 */
export type ToolsPutCheck<Encoded = never> =
  | { ok: false; error: string; field?: string }
  | { ok: true; endpoints: ToolEndpoint[]; toolsJson: string | Encoded; view: ToolsView | Encoded };

export function checkToolsPut(value: unknown, context: ToolsViewContext): ToolsPutCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: BODY_NOT_JSON_ERROR };
  const parsed = ClientToolsPutSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.map(String).join('.') || 'tools';
    return { ok: false, error: `${field}: ${issue.message}`, field };
  }
  const tools = parsed.data.tools;
  return {
    ok: true,
    endpoints: tools.map(({ name, endpoint }) => ({ name, ...(endpoint === undefined ? {} : { endpoint }) })),
    toolsJson: JSON.stringify(tools),
    view: toolsView(tools, context),
  };
}

/** `GET /tools`: the catalog metadata and exec description of a session with `clientTools`. */
export function toolsView(clientTools: readonly ClientTool[], context: ToolsViewContext): ToolsView {
  const { tenant, mcp, limits, tenantTools } = context;
  const servers = mcp.servers as McpServerScope[];
  return new SessionToolCatalog(mcp.tools as ToolDefinition[], clientTools, servers, tenant, tenantTools.tools).view(limits);
}

/** {@link toolsView} over the JSON the ledger stores (`[]` when the session registered none). */
export function toolsViewOfJson(toolsJson: string | null, context: ToolsViewContext): ToolsView {
  return toolsView(toolsJson === null ? [] : (JSON.parse(toolsJson) as ClientTool[]), context);
}

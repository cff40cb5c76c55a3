import { ClientToolSchema, TenantToolPutSchema, type ClientTool } from '@codemode/contracts';
import { BODY_NOT_JSON_ERROR } from '../http/request-context';

/**
 * A checked `PUT /v1/tools/{name}` (SPEC §18): the tool with its name, and its credential headers
 * in clear (absent: keep the stored ones), which only `TenantToolsService` sees, to seal them.
 */
export type TenantToolCheck =
  { ok: false; error: string; field: string } | { ok: true; tool: ClientTool; headers: Record<string, string> | undefined };

/**
 * The tool `PUT /v1/tools/{name}` stores, or the first thing wrong with it: the name as a session's
 * client tool name (SPEC §5), the body as a client tool's fields, checked by the same schema.
 */
export function checkTenantToolPut(name: string, value: unknown): TenantToolCheck {
  const named = ClientToolSchema.shape.name.safeParse(name);
  if (!named.success) return { ok: false, error: `name: ${named.error.issues[0].message}`, field: 'name' };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: BODY_NOT_JSON_ERROR, field: 'body' };
  const parsed = TenantToolPutSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.map(String).join('.') || 'body';
    return { ok: false, error: `${field}: ${issue.message}`, field };
  }
  const { headers, ...fields } = parsed.data;
  return { ok: true, tool: { name, ...fields }, headers };
}

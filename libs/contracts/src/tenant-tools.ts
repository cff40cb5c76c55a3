import { z } from 'zod';
import { toolHeadersProblem } from './tool-headers';
import { ClientToolSchema, type ClientTool } from './tools';

/** SPEC §18: most tools one tenant may register with `PUT /v1/tools/{name}`. */
export const MAX_TENANT_TOOLS = 256;

/**
 * Credential headers sent with every call of the tool (SPEC §18), write-only: at most 16, token
 * names, values up to 4 KiB, none of the names code mode sets itself (`toolHeadersProblem`).
 */
export const ToolHeadersSchema = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  const problem = toolHeadersProblem(headers);
  if (problem) ctx.addIssue({ code: 'custom', path: problem[0] === '' ? [] : [problem[0]], message: problem[1] });
});

/**
 * `PUT /v1/tools/{name}` body (SPEC §18): a client tool of the whole tenant, its name taken from
 * the path; the same fields and bounds as a session's client tool (SPEC §5), and `headers`.
 * Without `headers` the stored ones are kept (unless `endpoint` changes); `{}` clears them.
 */
export const TenantToolPutSchema = ClientToolSchema.omit({ name: true }).extend({ headers: ToolHeadersSchema.optional() });
export type TenantToolPut = z.infer<typeof TenantToolPutSchema>;
/** A tenant tool as a client sends it (defaults not applied yet). */
export type TenantToolPutInput = z.input<typeof TenantToolPutSchema>;

/**
 * A tenant tool as every session's catalog lists it (SPEC §18): a client tool, with the names of
 * its credential headers and, sealed (`HeaderVault`), their values; never the values in clear.
 */
export type TenantTool = ClientTool & { headerNames?: string[]; sealedHeaders?: string };

/** One row of `GET /v1/tools` and the `PUT` answer: the tool, its header names only. */
export type TenantToolView = ClientTool & { headerNames?: string[] };

/** A stored tool as a read shows it: the sealed values left out. */
export function tenantToolView(tool: TenantTool): TenantToolView {
  const { sealedHeaders: _sealed, ...view } = tool;
  return view;
}

/** What the tenant's count cap answers when a new tool would pass it. */
export const TENANT_TOOLS_FULL = `the tenant has ${MAX_TENANT_TOOLS} tools, the most it may register; delete one first.`;

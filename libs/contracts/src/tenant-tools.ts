import { z } from 'zod';
import { ClientToolSchema, type ClientTool } from './tools';

/** SPEC §18: most tools one tenant may register with `PUT /v1/tools/{name}`. */
export const MAX_TENANT_TOOLS = 256;

/**
 * `PUT /v1/tools/{name}` body (SPEC §18): a client tool of the whole tenant, its name taken from
 * the path; the same fields and bounds as a session's client tool (SPEC §5).
 */
export const TenantToolPutSchema = ClientToolSchema.omit({ name: true });
export type TenantToolPut = z.infer<typeof TenantToolPutSchema>;

/** A tenant tool as stored and as every session's catalog lists it (SPEC §18). */
export type TenantTool = ClientTool;

/** One row of `GET /v1/tools`. */
export type TenantToolView = TenantTool;

/** `GET /v1/tools`: the tenant's tools, by name. */
export interface TenantToolsList {
  tools: TenantToolView[];
}

/** What the tenant's count cap answers when a new tool would pass it. */
export const TENANT_TOOLS_FULL = `the tenant has ${MAX_TENANT_TOOLS} tools, the most it may register; delete one first.`;

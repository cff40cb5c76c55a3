import { z } from 'zod';
import { ClientToolSchema, TenantToolPutSchema } from '@codemode/contracts';

/*
 * Tenant tools (SPEC §18): the bodies and answers of TenantToolsController, for the OpenAPI document.
 */

/** A tenant tool as a read shows it: its credential headers by name only (SPEC §18). */
export const TenantToolViewSchema = ClientToolSchema.extend({ headerNames: z.array(z.string()).optional() });
/** `GET /v1/tools`: the tenant's tools by name. */
export const TenantToolListSchema = z.object({ tools: z.array(TenantToolViewSchema) });
/** `DELETE /v1/tools/{name}`. */
export const TenantToolDeletedSchema = z.object({ name: z.string(), deleted: z.literal(true) });

export const TENANT_TOOLS_REQUEST_SCHEMAS = {
  TenantToolPut: TenantToolPutSchema,
} satisfies Record<string, z.ZodType>;

export const TENANT_TOOLS_RESPONSE_SCHEMAS = {
  TenantTool: TenantToolViewSchema,
  TenantToolList: TenantToolListSchema,
  TenantToolDeleted: TenantToolDeletedSchema,
} satisfies Record<string, z.ZodType>;

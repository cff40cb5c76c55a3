import { z } from 'zod';
import { ClientToolSchema, TenantToolPutSchema } from '@codemode/contracts';

/*
 * Tenant tools (SPEC §18): the bodies and answers of TenantToolsController, for the OpenAPI document.
 */

/** `GET /v1/tools`: the tenant's tools by name. */
export const TenantToolListSchema = z.object({ tools: z.array(ClientToolSchema) });
/** `DELETE /v1/tools/{name}`. */
export const TenantToolDeletedSchema = z.object({ name: z.string(), deleted: z.literal(true) });

export const TENANT_TOOLS_REQUEST_SCHEMAS = {
  TenantToolPut: TenantToolPutSchema,
} satisfies Record<string, z.ZodType>;

export const TENANT_TOOLS_RESPONSE_SCHEMAS = {
  TenantTool: ClientToolSchema,
  TenantToolList: TenantToolListSchema,
  TenantToolDeleted: TenantToolDeletedSchema,
} satisfies Record<string, z.ZodType>;

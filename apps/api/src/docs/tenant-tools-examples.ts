import type { TenantToolPut, TenantToolView } from '@codemode/contracts';
import type { Example } from './example';
import type { TENANT_TOOLS_REQUEST_SCHEMAS, TENANT_TOOLS_RESPONSE_SCHEMAS } from './tenant-tools-schemas';

const lookup: TenantToolPut = {
  description: 'Look up an order by its id',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  outputSchema: { type: 'object', properties: { status: { type: 'string' }, total: { type: 'number' } } },
  endpoint: 'https://orders.internal.example/lookup',
  replaySafe: true,
  timeoutMs: 10_000,
};
const tool: TenantToolView = { name: 'lookup_order', ...lookup, headerNames: ['Authorization'] };

/** Examples of the SPEC §18 tenant tool bodies and answers (checked against their schemas like the others). */
export const TENANT_TOOLS_EXAMPLES: Record<
  keyof typeof TENANT_TOOLS_REQUEST_SCHEMAS | keyof typeof TENANT_TOOLS_RESPONSE_SCHEMAS,
  Record<string, Example>
> = {
  TenantToolPut: {
    lookup: { summary: 'A webhook tool of the whole tenant, with its schemas', value: lookup },
    withCredentials: {
      summary: 'With a credential header: sent with every call, never shown again (reads show its name)',
      value: { ...lookup, headers: { Authorization: 'Bearer <your token>' } },
    },
  },
  TenantTool: { lookup: { summary: 'The stored tool', value: tool } },
  TenantToolList: { tools: { summary: "The tenant's tools, by name", value: { tools: [tool] } } },
  TenantToolDeleted: { deleted: { summary: 'Removed', value: { name: 'lookup_order', deleted: true } } },
};

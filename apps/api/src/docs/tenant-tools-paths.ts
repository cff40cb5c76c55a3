import { body, errors, ok, type PathItem } from './openapi-builders';

const NAME = {
  name: 'name',
  in: 'path',
  required: true,
  description: "Tool name: 1-128 characters, not blank (the catalog derives a callable name, as for a session's client tool).",
  schema: { type: 'string' },
};

/** The routes of SPEC §18's tenant tools (TenantToolsController). */
export function tenantToolsPaths(): Record<string, PathItem> {
  return {
    '/v1/tools': {
      get: {
        operationId: 'listTenantTools',
        tags: ['tools'],
        summary: "List the tenant's tools",
        description: 'Every tool of the tenant, sorted by name; any key of the tenant.',
        responses: { '200': ok("The tenant's tools.", 'TenantToolList'), ...errors(401, 503) },
      },
    },
    '/v1/tools/{name}': {
      put: {
        operationId: 'putTenantTool',
        tags: ['tools'],
        summary: 'Store one of the tenant’s tools',
        description:
          "Creates or replaces the tool `name`, a client tool of every session of the tenant: after the core and MCP tools and before the session's client tools " +
          "(an operator's session client tool of the same name shadows it; an agent key's is refused with 403). Its schemas are trusted: the quick index shows its " +
          'input signature and output hint. A new name is refused (400) once the tenant has 256. `headers` (at most 16, values up to 4 KiB) are sent with every call ' +
          'and are write-only: kept encrypted under CODEMODE_SECRETS_KEY (503 while none is set), never shown (reads list `headerNames`); omitted, the stored ones are kept ' +
          'unless `endpoint` changes; `{}` clears them. Host, Content-Length, Content-Type, Transfer-Encoding, Connection, Idempotency-Key and X-Codemode-* are refused (400). ' +
          'Operator keys only.',
        parameters: [NAME],
        requestBody: body('TenantToolPut'),
        responses: { '200': ok('The stored tool.', 'TenantTool'), ...errors(400, 401, 403, 413, 429, 503) },
      },
      delete: {
        operationId: 'deleteTenantTool',
        tags: ['tools'],
        summary: 'Remove one of the tenant’s tools',
        description: 'Operator keys only; 404 when the tenant has no tool of that name.',
        parameters: [NAME],
        responses: { '200': ok('Removed.', 'TenantToolDeleted'), ...errors(401, 403, 404, 503) },
      },
    },
  };
}

import { Injectable } from '@nestjs/common';
import { TENANT_TOOLS_FULL, MAX_TENANT_TOOLS, type TenantToolView, type TenantToolsList } from '@codemode/contracts';
import { TenantToolsLedger } from '@codemode/events';
import { BodyThreads } from '../bodies/body-threads';
import { InvalidInputException, NotFoundApiException } from '../http/api-errors';
import { requireObjectBody } from '../http/request-params';
import type { ParsedBody } from '../http/request-context';
import { TenantToolLists } from './tenant-tool-lists';
import { checkTenantToolPut, type TenantToolCheck } from './tenant-tools-body';
import { ToolEndpointCheck } from './tool-endpoint-check';

/**
 * The tenant's tools (SPEC §18): `PUT`/`GET`/`DELETE /v1/tools`. Each is a client tool of every
 * session of the tenant, checked as a session's client tool is (a body past 8 KiB on a body
 * thread, its endpoint by the address rules), stored one per name, at most MAX_TENANT_TOOLS.
 */
@Injectable()
export class TenantToolsService {
  constructor(
    private readonly ledger: TenantToolsLedger,
    private readonly lists: TenantToolLists,
    private readonly bodies: BodyThreads,
    private readonly endpoints: ToolEndpointCheck,
  ) {}

  async put(tenant: string, name: string, body: ParsedBody): Promise<TenantToolView> {
    const check = await this.check(tenant, name, body);
    if (!check.ok)
      throw check.field === 'body'
        ? new InvalidInputException(check.error)
        : new InvalidInputException(check.error, { field: check.field });
    await this.endpoints.require([check.tool], () => 'endpoint');
    const put = await this.ledger.put(tenant, name, check.json);
    if (!put.stored) throw new InvalidInputException(`name: ${TENANT_TOOLS_FULL}`, { field: 'name', limit: MAX_TENANT_TOOLS });
    return check.tool;
  }

  /** The tenant's tools by name, as every session's catalog has them. */
  async list(tenant: string): Promise<TenantToolsList> {
    return { tools: (await this.lists.current(tenant)).tools };
  }

  async delete(tenant: string, name: string): Promise<{ name: string; deleted: true }> {
    if (!(await this.ledger.delete(tenant, name))) throw new NotFoundApiException(`tool ${name} not found.`);
    return { name, deleted: true };
  }

  private async check(tenant: string, name: string, body: ParsedBody): Promise<TenantToolCheck> {
    if (body.kind !== 'large') return checkTenantToolPut(name, requireObjectBody(body));
    const read = await this.bodies
      .run(tenant, { kind: 'tenant-tool', bytes: body.bytes, name })
      .catch(() => ({ kind: 'invalid_json' }) as const);
    // Unreadable: requireObjectBody answers it as it answers a small body that is.
    return read.kind === 'checked' ? read.check : checkTenantToolPut(name, requireObjectBody(read));
  }
}

import { HttpException, HttpStatus, Inject, Injectable } from '@nestjs/common';
import {
  MAX_TENANT_TOOLS,
  TENANT_TOOLS_FULL,
  tenantToolView,
  type ApiErrorBody,
  type ClientTool,
  type TenantTool,
  type TenantToolView,
} from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { TenantToolsLedger } from '@codemode/events';
import { HeaderVault } from '@codemode/tools';
import { BodyThreads } from '../bodies/body-threads';
import { APP_CONFIG } from '../core/tokens';
import { InvalidInputException, NotFoundApiException } from '../http/api-errors';
import { requireObjectBody } from '../http/request-params';
import type { ParsedBody } from '../http/request-context';
import { TenantToolLists } from './tenant-tool-lists';
import { checkTenantToolPut, type TenantToolCheck } from './tenant-tools-body';
import { ToolEndpointCheck } from './tool-endpoint-check';

/** SPEC §18: the 503 a tenant tool with headers gets while the API has no key to encrypt them. */
export const NO_SECRETS_KEY_ERROR =
  'tenant tool headers are stored encrypted and this deployment has no CODEMODE_SECRETS_KEY; set it (at least 32 characters) on the API and every worker, or register the tool without headers.';

/**
 * The tenant's tools (SPEC §18): `PUT`/`GET`/`DELETE /v1/tools`. Each is a client tool of every
 * session of the tenant, checked as a session's client tool is (a body past 8 KiB on a body
 * thread, its endpoint by the address rules), stored one per name, at most MAX_TENANT_TOOLS.
 * Credential headers are sealed here (`HeaderVault`) before anything is stored, and only the
 * worker opens them to send them: no answer of this API carries a value.
 */
@Injectable()
export class TenantToolsService {
  private readonly vault: HeaderVault | null;

  constructor(
    private readonly ledger: TenantToolsLedger,
    private readonly lists: TenantToolLists,
    private readonly bodies: BodyThreads,
    private readonly endpoints: ToolEndpointCheck,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const keys = config.secretsKeys;
    this.vault = keys === null ? null : new HeaderVault(keys.current, keys.previous);
  }

  async put(tenant: string, name: string, body: ParsedBody): Promise<TenantToolView> {
    const check = await this.check(tenant, name, body);
    if (!check.ok)
      throw check.field === 'body'
        ? new InvalidInputException(check.error)
        : new InvalidInputException(check.error, { field: check.field });
    await this.endpoints.require([check.tool], () => 'endpoint');
    const tool: TenantTool = { ...check.tool, ...(await this.headerFields(tenant, check.tool, check.headers)) };
    const put = await this.ledger.put(tenant, name, JSON.stringify(tool));
    if (!put.stored) throw new InvalidInputException(`name: ${TENANT_TOOLS_FULL}`, { field: 'name', limit: MAX_TENANT_TOOLS });
    return tenantToolView(tool);
  }

  /** The tenant's tools by name, as every session's catalog has them, header names only: JSON bytes serialized once per version. */
  async list(tenant: string): Promise<Uint8Array> {
    return (await this.lists.current(tenant)).view;
  }

  async delete(tenant: string, name: string): Promise<{ name: string; deleted: true }> {
    if (!(await this.ledger.delete(tenant, name))) throw new NotFoundApiException(`tool ${name} not found.`);
    return { name, deleted: true };
  }

  /**
   * SPEC §18: `headers` sealed under the tool's tenant, name and endpoint; `{}` clears them; absent,
   * the stored ones are kept while the endpoint stays (a credential never follows its tool elsewhere).
   */
  private async headerFields(
    tenant: string,
    tool: ClientTool,
    headers: Record<string, string> | undefined,
  ): Promise<Pick<TenantTool, 'headerNames' | 'sealedHeaders'>> {
    if (headers === undefined) {
      const stored = await this.ledger.get(tenant, tool.name);
      const previous = stored === null ? null : (JSON.parse(stored) as TenantTool);
      if (previous?.sealedHeaders === undefined || previous.endpoint !== tool.endpoint) return {};
      return { headerNames: previous.headerNames, sealedHeaders: previous.sealedHeaders };
    }
    const names = Object.keys(headers);
    if (names.length === 0) return {};
    if (this.vault === null) {
      throw new HttpException(
        { error: NO_SECRETS_KEY_ERROR, code: 'runtime_unavailable' } satisfies ApiErrorBody,
        HttpStatus.SERVICE_UNAVAILABLE,
      );
    }
    return { headerNames: names, sealedHeaders: this.vault.seal(headers, { tenant, tool: tool.name, endpoint: tool.endpoint }) };
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

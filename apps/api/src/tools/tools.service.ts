import { Inject, Injectable } from '@nestjs/common';
import type { ClientTool, RegisteredClientTool, SessionRef, ToolsView } from '@codemode/contracts';
import { apiTenancy, effectiveLimits, type AppConfig, type KeyRole } from '@codemode/config';
import { ClientToolsLedger, SessionLedger } from '@codemode/events';
import { DeploymentCatalog } from '@codemode/fleet';
import {
  findRefusedEndpoint,
  mergeRegistration,
  OperatorToolLockedError,
  refusalReason,
  TooManyClientToolsError,
  WebhookAddressPolicy,
  WebhookAllowList,
} from '@codemode/tools';
import { BodyThreads, INLINE_BODY_BYTES } from '../bodies/body-threads';
import { ConflictApiException, ForbiddenApiException, InvalidInputException } from '../core/api-errors';
import { requireObjectBody } from '../core/request-params';
import type { ParsedBody } from '../core/request-context';
import { APP_CONFIG } from '../core/tokens';
import { checkToolsPut, toolsViewOfJson, type ToolEndpoint, type ToolsPutCheck, type ToolsViewContext } from './tools-body';

/** A catalog view, or its JSON's bytes when a body thread built it (see `jsonReply`). */
export type ToolsAnswer = ToolsView | Uint8Array;

/**
 * An agent key's registration is merged into the stored list and written only over that list;
 * after this many lost races with other registrations of the session it is answered 409.
 */
const MERGE_ATTEMPTS = 3;

/**
 * `PUT`/`GET /v1/sessions/{sid}/tools` (SPEC §5): client tool registration and the catalog view.
 * A registration reaches 16 MiB of schemas: parsing, checking, serializing it and building its view
 * from it happen on a body thread once it is large (SPEC §10 "Event loops").
 */
@Injectable()
export class ToolsService {
  private readonly webhookAllow: WebhookAllowList;

  constructor(
    private readonly clientTools: ClientToolsLedger,
    private readonly deployment: DeploymentCatalog,
    private readonly sessions: SessionLedger,
    private readonly bodies: BodyThreads,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.webhookAllow = new WebhookAllowList(config.tenancySettings.webhookAllow);
  }

  /**
   * A PUT replaces the session's client tools, an agent key's only its own (SPEC §11); one
   * endpoint the address rules refuse stores nothing.
   */
  async put(ref: SessionRef, role: KeyRole, body: ParsedBody): Promise<ToolsAnswer> {
    const context = await this.viewContext(ref);
    const check = await this.check(ref, body, context);
    if (!check.ok) throw new InvalidInputException(check.error, check.field === undefined ? undefined : { field: check.field });
    const json = check.toolsJson;
    if (role === 'agent') {
      // The merge needs the tools themselves: an agent's registration is parsed again here, once checked.
      const text = typeof json === 'string' ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8');
      await this.putAgentTools(ref, JSON.parse(text) as ClientTool[]);
      return this.view(ref);
    }
    // An operator's list is stored as checked: a tool without `registeredBy` is an operator's.
    await this.checkEndpoints(check.endpoints);
    const toolsJson = typeof json === 'string' ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
    await this.clientTools.putJson(
      ref,
      check.endpoints.map((tool) => tool.name),
      toolsJson,
    );
    return check.view;
  }

  /** The operator's tools are kept as stored: the merge is refused (403) before any endpoint is looked at. */
  private async putAgentTools(ref: SessionRef, tools: readonly ClientTool[]): Promise<void> {
    let current = await this.clientTools.read(ref);
    let merged = mergedOrRefused(current.tools, tools);
    await this.checkEndpoints(tools);
    for (let attempt = 1; !(await this.clientTools.putIfUnchanged(ref, merged, current.version)); attempt += 1) {
      if (attempt === MERGE_ATTEMPTS) {
        throw new ConflictApiException("the session's client tools kept changing while this registration was merged; retry it.");
      }
      current = await this.clientTools.read(ref);
      merged = mergedOrRefused(current.tools, tools);
    }
  }

  async view(ref: SessionRef): Promise<ToolsAnswer> {
    const [bytes, context] = await Promise.all([this.clientTools.getJsonBytes(ref), this.viewContext(ref)]);
    if (bytes === null || bytes.length <= INLINE_BODY_BYTES) return toolsViewOfJson(bytes?.toString('utf8') ?? null, context);
    return this.bodies.run(ref.tenant, { kind: 'tools-view', bytes, context });
  }

  /** The session's exec description (SPEC §5), as `view` has it; a never-written session gets the defaults. */
  async execDescription(ref: SessionRef): Promise<string> {
    const [bytes, context] = await Promise.all([this.clientTools.getJsonBytes(ref), this.viewContext(ref)]);
    if (bytes === null || bytes.length <= INLINE_BODY_BYTES)
      return toolsViewOfJson(bytes?.toString('utf8') ?? null, context).execDescription;
    return this.bodies.run(ref.tenant, { kind: 'exec-description', bytes, context });
  }

  /**
   * What the session's exec description is built from, cheaply (its client tools' version, the
   * session's limits, the deployment's MCP catalog): it changes whenever the description may have,
   * without the list itself being read or the description built (a list reaches 16 MiB).
   */
  async catalogInputs(ref: SessionRef): Promise<string> {
    const [tools, context] = await Promise.all([this.clientTools.version(ref), this.viewContext(ref)]);
    return JSON.stringify([tools, context]);
  }

  private async check(ref: SessionRef, body: ParsedBody, context: ToolsViewContext): Promise<ToolsPutCheck<Uint8Array>> {
    if (body.kind !== 'large') return checkToolsPut(requireObjectBody(body), context);
    // A body that kills its thread (out of memory) is not one this API can read.
    const read = await this.bodies
      .run(ref.tenant, { kind: 'tools', bytes: body.bytes, context })
      .catch(() => ({ kind: 'invalid_json' }) as const);
    // Unreadable: requireObjectBody answers it as it answers a small body that is.
    return read.kind === 'checked' ? read.check : checkToolsPut(requireObjectBody(read), context);
  }

  private async viewContext(ref: SessionRef): Promise<ToolsViewContext> {
    const [mcp, session] = await Promise.all([this.deployment.readMcp(), this.sessions.get(ref)]);
    const limits = effectiveLimits(this.config, ref.tenant, session?.codeMode);
    return { tenant: ref.tenant, mcp, limits: { timeoutMs: limits.timeoutMs, maxOutputBytes: limits.maxOutputBytes } };
  }

  /** SPEC §10 "Webhooks and MCP": the registration-time address check. */
  private async checkEndpoints(tools: readonly ToolEndpoint[]): Promise<void> {
    const refused = await findRefusedEndpoint(tools, new WebhookAddressPolicy(this.webhookAllow, apiTenancy(this.config)));
    if (!refused) return;
    const { index, tool, origin, refusal } = refused;
    throw new InvalidInputException(
      `tool ${tool.name}: endpoint ${origin} ${refusalReason(refusal)}, which client tools may not reach; allow it with CODEMODE_WEBHOOK_ALLOW.`,
      { field: `tools.${index}.endpoint`, tool: tool.name, address: refusal.address, addressClass: refusal.addressClass },
    );
  }
}

/** An agent key's tools merged with the operator's kept, or the 403 / 400 the merge rule answers. */
function mergedOrRefused(current: readonly RegisteredClientTool[], tools: readonly ClientTool[]): RegisteredClientTool[] {
  try {
    return mergeRegistration(current, tools, 'agent');
  } catch (error) {
    if (error instanceof OperatorToolLockedError) throw new ForbiddenApiException(error.message);
    if (error instanceof TooManyClientToolsError) throw new InvalidInputException(error.message, { field: 'tools' });
    throw error;
  }
}

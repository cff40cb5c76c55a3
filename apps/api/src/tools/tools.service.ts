import { Inject, Injectable } from '@nestjs/common';
import type { SessionRef, ToolsView } from '@codemode/contracts';
import { effectiveLimits, type AppConfig, type KeyRole } from '@codemode/config';
import { ClientToolsLedger, SessionLedger } from '@codemode/events';
import { DeploymentCatalog } from '@codemode/fleet';
import { BodyThreads, INLINE_BODY_BYTES } from '../bodies/body-threads';
import { ConflictApiException, ForbiddenApiException, InvalidInputException } from '../http/api-errors';
import { requireObjectBody } from '../http/request-params';
import type { ParsedBody } from '../http/request-context';
import { APP_CONFIG } from '../core/tokens';
import { mergeAgentTools, type AgentMerge } from './agent-merge';
import { DerivedCatalogs } from './derived-catalogs';
import { TenantTurns } from './tenant-turns';
import { TenantToolLists } from './tenant-tool-lists';
import { ToolEndpointCheck } from './tool-endpoint-check';
import { checkToolsPut, threadContext, toolsViewOfJson, type ToolsPutCheck, type ToolsViewContext } from './tools-body';

/** A catalog view, or its JSON's bytes (see `jsonReply`). */
export type ToolsAnswer = ToolsView | Uint8Array;

/**
 * An agent key's registration is merged into the stored list and written only over that list;
 * after this many lost races with other registrations of the session it is answered 409.
 */
const MERGE_ATTEMPTS = 3;

/** What one tenant's, and all tenants', kept exec descriptions may hold (views: `DerivedCatalogs`' defaults). */
const DESCRIPTION_TENANT_BYTES = 8 * 1024 * 1024;
const DESCRIPTION_TOTAL_BYTES = 32 * 1024 * 1024;

/**
 * `PUT`/`GET /v1/sessions/{sid}/tools` (SPEC §5): client tool registration and the catalog view.
 * A registration reaches 16 MiB of schemas: parsing, checking, merging, serializing it and building
 * its view from it happen on a body thread once it is large (SPEC §10 "Event loops"). What is
 * derived from a session's list (its view, its exec description) is derived once per version of
 * the list and kept (`DerivedCatalogs`); a tenant's whole lists are read one at a time (`TenantTurns`).
 */
@Injectable()
export class ToolsService {
  private readonly views = new DerivedCatalogs<Uint8Array>((view) => view.byteLength);
  /** Descriptions are small (their quick index is bounded): a smaller bound. UTF-16: two bytes a character. */
  private readonly descriptions = new DerivedCatalogs<string>(
    (description) => description.length * 2,
    DESCRIPTION_TENANT_BYTES,
    DESCRIPTION_TOTAL_BYTES,
  );
  private readonly listReads = new TenantTurns();

  constructor(
    private readonly clientTools: ClientToolsLedger,
    private readonly deployment: DeploymentCatalog,
    private readonly sessions: SessionLedger,
    private readonly bodies: BodyThreads,
    private readonly endpoints: ToolEndpointCheck,
    private readonly tenantTools: TenantToolLists,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A PUT replaces the session's client tools, an agent key's only its own (SPEC §11); one
   * endpoint the address rules refuse stores nothing.
   */
  async put(ref: SessionRef, role: KeyRole, body: ParsedBody): Promise<ToolsAnswer> {
    const context = await this.viewContext(ref);
    const check = await this.check(ref, body, context);
    if (!check.ok) throw new InvalidInputException(check.error, check.field === undefined ? undefined : { field: check.field });
    if (role === 'agent') return this.putAgentTools(ref, check, context);
    // An operator's list is stored as checked: a tool without `registeredBy` is an operator's.
    await this.endpoints.require(check.endpoints, (index) => `tools.${index}.endpoint`);
    await this.clientTools.putJson(
      ref,
      check.endpoints.map((tool) => tool.name),
      asBuffer(check.toolsJson),
    );
    return check.view;
  }

  /**
   * Merged onto the list as read, and written only over that list, in the tenant's turn (a
   * tenant's merges of one session never race each other in one API). The operator's tools are
   * kept as stored: the merge is refused (403) before any endpoint is looked at.
   */
  private putAgentTools(
    ref: SessionRef,
    check: Extract<ToolsPutCheck<Uint8Array>, { ok: true }>,
    context: ToolsViewContext,
  ): Promise<ToolsAnswer> {
    return this.listReads.run(ref.tenant, async () => {
      for (let attempt = 1; ; attempt += 1) {
        const current = await this.clientTools.snapshot(ref);
        const merge = await this.merge(ref.tenant, current.bytes, check.toolsJson, context);
        if (!merge.ok) {
          if (merge.refusal === 'operator_locked') throw new ForbiddenApiException(merge.error);
          throw new InvalidInputException(merge.error, { field: 'tools' });
        }
        if (attempt === 1) await this.endpoints.require(check.endpoints, (index) => `tools.${index}.endpoint`);
        if (await this.clientTools.putJsonIfUnchanged(ref, merge.names, asBuffer(merge.toolsJson), current.version)) return merge.view;
        if (attempt === MERGE_ATTEMPTS) {
          throw new ConflictApiException("the session's client tools kept changing while this registration was merged; retry it.");
        }
      }
    });
  }

  /** {@link mergeAgentTools}, on a body thread once the lists are large. */
  private async merge(
    tenant: string,
    stored: Buffer | null,
    submitted: string | Uint8Array,
    context: ToolsViewContext,
  ): Promise<AgentMerge<Uint8Array>> {
    const submittedBytes = typeof submitted === 'string' ? Buffer.from(submitted) : submitted;
    if ((stored?.length ?? 0) + submittedBytes.byteLength <= INLINE_BODY_BYTES) {
      return mergeAgentTools(stored?.toString('utf8') ?? null, Buffer.from(submittedBytes).toString('utf8'), context);
    }
    return this.bodies.run(tenant, { kind: 'tools-merge', stored, submitted: submittedBytes, context: threadContext(context) });
  }

  /** `GET /tools`: derived once per version of the session's list, as JSON bytes. */
  async view(ref: SessionRef): Promise<Uint8Array> {
    const { key, context } = await this.inputs(ref);
    return this.views.get(ref.tenant, key, () =>
      this.listReads.run(ref.tenant, async () => {
        const { bytes } = await this.clientTools.snapshot(ref);
        if (bytes === null || bytes.length <= INLINE_BODY_BYTES) {
          return Buffer.from(JSON.stringify(toolsViewOfJson(bytes?.toString('utf8') ?? null, context)));
        }
        return this.bodies.run(ref.tenant, { kind: 'tools-view', bytes, context: threadContext(context) });
      }),
    );
  }

  /**
   * The session's exec description (SPEC §5), as `view` has it; a never-written session gets the
   * defaults. Derived once per version of the list: `tools/list` and `…/tools/definitions` never
   * read the list whole per call.
   */
  async execDescription(ref: SessionRef): Promise<string> {
    const { key, context } = await this.inputs(ref);
    return this.descriptions.get(ref.tenant, key, () =>
      this.listReads.run(ref.tenant, async () => {
        const { bytes } = await this.clientTools.snapshot(ref);
        if (bytes === null || bytes.length <= INLINE_BODY_BYTES) {
          return toolsViewOfJson(bytes?.toString('utf8') ?? null, context).execDescription;
        }
        return this.bodies.run(ref.tenant, { kind: 'exec-description', bytes, context: threadContext(context) });
      }),
    );
  }

  /**
   * What the session's exec description is built from, cheaply (its client tools' version, the
   * session's limits, the deployment's MCP catalog, the tenant's tools' version): it changes whenever the description may have,
   * without the list itself being read or the description built (a list reaches 16 MiB).
   */
  async catalogInputs(ref: SessionRef): Promise<string> {
    return (await this.inputs(ref)).key;
  }

  /** The key what is derived from the session's list is kept under, and the context it is derived in. */
  private async inputs(ref: SessionRef): Promise<{ key: string; context: ToolsViewContext }> {
    const [tools, context] = await Promise.all([this.clientTools.version(ref), this.viewContext(ref)]);
    // The tenant's tools by their version: they reach 256 tools of ~136 KB (SPEC §18).
    const { tenantTools, ...rest } = context;
    return { key: JSON.stringify([ref.sessionId, tools, rest, tenantTools.version]), context };
  }

  private async check(ref: SessionRef, body: ParsedBody, context: ToolsViewContext): Promise<ToolsPutCheck<Uint8Array>> {
    if (body.kind !== 'large') return checkToolsPut(requireObjectBody(body), context);
    // A body that kills its thread (out of memory) is not one this API can read.
    const read = await this.bodies
      .run(ref.tenant, { kind: 'tools', bytes: body.bytes, context: threadContext(context) })
      .catch(() => ({ kind: 'invalid_json' }) as const);
    // Unreadable: requireObjectBody answers it as it answers a small body that is.
    return read.kind === 'checked' ? read.check : checkToolsPut(requireObjectBody(read), context);
  }

  private async viewContext(ref: SessionRef): Promise<ToolsViewContext> {
    const [mcp, session, tenantTools] = await Promise.all([
      this.deployment.readMcp(),
      this.sessions.get(ref),
      this.tenantTools.current(ref.tenant),
    ]);
    const limits = effectiveLimits(this.config, ref.tenant, session?.codeMode);
    return { tenant: ref.tenant, mcp, limits: { timeoutMs: limits.timeoutMs, maxOutputBytes: limits.maxOutputBytes }, tenantTools };
  }
}

/** A list serialized on a body thread comes as bytes; ioredis writes them without encoding them again. */
function asBuffer(json: string | Uint8Array): string | Buffer {
  return typeof json === 'string' ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
}

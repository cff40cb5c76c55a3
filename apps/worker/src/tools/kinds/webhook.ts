import type { CatalogEntry } from '@codemode/catalog';
import type { TenantTool } from '@codemode/contracts';
import {
  callWebhookTool,
  SealedHeadersError,
  WebhookAddressRefusedError,
  type HeaderVault,
  type WebhookAddressPolicy,
} from '@codemode/tools';
import { ToolCallError } from '../tool-call-error';
import type { KindCall, ResolvedTool, ToolKind } from './tool-kind';
import type { WebhookRefusalWarnings } from '../webhook-refusal-warnings';

/** What a webhook call needs from the worker. */
export interface WebhookDeps {
  /** The address rules an endpoint is checked against when it is dialed (SPEC §10), read per call: the mode can change while a run is parked. */
  addressPolicy: () => WebhookAddressPolicy;
  /** The tenant's webhook signing secret, if any. */
  secretOf: (tenant: string) => string | undefined;
  /** Tells the operator about a call the address rules refused; the worker always passes one (ToolKinds). */
  refusals?: WebhookRefusalWarnings;
  /** Opens tenant tools' credential headers (SPEC §18); null when the worker has no CODEMODE_SECRETS_KEY. Absent: null. */
  headerVault?: HeaderVault | null;
}

/** SPEC §18: a tenant tool with headers called on a worker that cannot open them. */
export function noSecretsKeyMessage(callableName: string): string {
  return `tool ${callableName} sends credential headers and this worker has no CODEMODE_SECRETS_KEY; set it on every worker as on the API.`;
}

/**
 * A client tool with a webhook endpoint (SPEC §10): POSTed, signed, with the call's callKey as
 * its idempotency key, within its registration's `timeoutMs` (SPEC §17). A client tool without
 * one reaches here only in an `awaitResults` run (in a parking run the platform answers it:
 * `PlatformAnsweredKind`), where it cannot be awaited.
 */
export class WebhookKind implements ToolKind {
  readonly answeredBy = 'worker';

  constructor(private readonly deps: WebhookDeps) {}

  handles({ entry }: ResolvedTool): boolean {
    return entry.source === 'client';
  }

  async call({ entry, run, catalog, call, input, callKey, signal }: KindCall): Promise<unknown> {
    const tool = catalog.clientTools.get(entry.toolName);
    if (!tool?.endpoint) {
      throw new ToolCallError(`client tool ${entry.callableName} is answered by the platform; it cannot be awaited with awaitResults.`);
    }
    const headers = this.headersOf(entry, tool, run.ref.tenant);
    try {
      return await callWebhookTool({
        toolName: entry.toolName,
        callableName: entry.callableName,
        endpoint: tool.endpoint,
        addressPolicy: this.deps.addressPolicy(),
        secret: this.deps.secretOf(run.ref.tenant),
        ...(headers ? { headers } : {}),
        timeoutMs: tool.timeoutMs,
        body: { input, callId: call.id, runId: run.runId, sessionId: run.ref.sessionId },
        idempotencyKey: callKey,
        signal,
      });
    } catch (error) {
      if (error instanceof WebhookAddressRefusedError) {
        this.deps.refusals?.refused(error.refusal, { ...run.ref, runId: run.runId, tool: entry.toolName });
      }
      throw error;
    }
  }

  /**
   * A tenant tool's credential headers, opened for this call only (SPEC §18): sealed to the tenant,
   * the tool and its endpoint, so only the tool they were registered with sends them.
   */
  private headersOf(entry: CatalogEntry, tool: TenantTool, tenant: string): Record<string, string> | undefined {
    if (!entry.trusted || tool.sealedHeaders === undefined) return undefined;
    const vault = this.deps.headerVault ?? null;
    if (vault === null) throw new ToolCallError(noSecretsKeyMessage(entry.callableName));
    try {
      return vault.open(tool.sealedHeaders, { tenant, tool: tool.name, endpoint: tool.endpoint });
    } catch (error) {
      if (error instanceof SealedHeadersError) throw new ToolCallError(`tool ${entry.callableName}: ${error.message}`);
      throw error;
    }
  }
}

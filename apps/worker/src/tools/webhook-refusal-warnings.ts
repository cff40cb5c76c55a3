import { refusalReason, type EndpointRefusal } from '@codemode/tools';
import type { Logger } from '@codemode/telemetry';

/** A refused host is warned about at most once in this long (a model retrying in a loop must not storm the log). */
const WARN_EVERY_MS = 10 * 60_000;
/** Hosts remembered at most; past it the oldest is forgotten (and may be warned about again). */
const MAX_HOSTS = 1000;

/**
 * The operator's side of a webhook call this worker refused by its address rules (SPEC §10): the
 * guest gets its error, the operator a `warn` that names the setting to change. The usual cause is
 * `CODEMODE_WEBHOOK_ALLOW` set on the API (so registration passed) but not on the worker.
 */
export class WebhookRefusalWarnings {
  private readonly warnedAt = new Map<string, number>();

  constructor(private readonly logger: Logger) {}

  refused(refusal: EndpointRefusal, fields: { tenant: string; sessionId: string; runId: string; tool: string }, now = Date.now()): void {
    const last = this.warnedAt.get(refusal.host);
    if (last !== undefined && now - last < WARN_EVERY_MS) {
      this.logger.debug({ ...fields, host: refusal.host }, 'webhook call refused by the address rules');
      return;
    }
    this.warnedAt.delete(refusal.host);
    this.warnedAt.set(refusal.host, now);
    if (this.warnedAt.size > MAX_HOSTS) this.warnedAt.delete(this.warnedAt.keys().next().value as string);
    this.logger.warn(
      { ...fields, host: refusal.host, address: refusal.address, addressClass: refusal.addressClass },
      `webhook call refused: endpoint host ${refusal.host} ${refusalReason(refusal)}; to allow it, set CODEMODE_WEBHOOK_ALLOW on the workers as on the API (registration is checked by the API, calls by the worker)`,
    );
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { agentIdOfScopeKey, type SessionRef, type ShellExitedData, type ShellNotifiedData } from '@codemode/contracts';
import { effectiveShellConfig, type AppConfig } from '@codemode/config';
import { ErrorGate, SessionLedger } from '@codemode/events';
import { exitNotice } from '@codemode/shell';
import { InFlightLimit } from '@codemode/fairness';
import { deliverNotification, WebhookAddressPolicy, WebhookAllowList, type NotificationOutcome } from '@codemode/tools';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { WorkerTenancy } from '../core/worker-tenancy.service';
import { APP_CONFIG, LOGGER } from '../core/tokens';

/**
 * Deliveries in flight on this worker (SPEC §10 fate isolation): one tenant's slow receiver holds
 * at most PER_TENANT of them, all tenants together at most TOTAL; past either an exit is recorded
 * as not notified rather than queued.
 */
const IN_FLIGHT_PER_TENANT = 16;
const IN_FLIGHT_TOTAL = 256;
/** How long a stopping worker lets deliveries in flight finish (the exits of the processes it ended among them). */
const SHUTDOWN_GRACE_MS = 5000;
/** One warning a minute per cause at most: a flood of exits must not become a log storm. */
const WARNING_INTERVAL_MS = 60_000;

export const OVER_BOUND_ERROR = 'too many exit notifications in flight; not sent';

/**
 * SPEC §7 "Exit notifications": when a background shell session of this worker ends, POSTs its
 * exit to the session's `notifyUrl`, as the session is configured at that moment. Runs beside
 * the shell: `exited` returns at once and a delivery only ever awaits I/O. The outcome goes back
 * to the ShellHost, which writes it to the log as `shell.notified`.
 */
@Injectable()
export class ShellExitNotifier {
  private readonly limit = new InFlightLimit({ perKey: IN_FLIGHT_PER_TENANT, total: IN_FLIGHT_TOTAL });
  private readonly allow: WebhookAllowList;
  private readonly warnings = new ErrorGate(WARNING_INTERVAL_MS);
  private readonly stopping = new AbortController();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly sessions: SessionLedger,
    private readonly tenancy: WorkerTenancy,
    private readonly metrics: WorkerMetrics,
  ) {
    this.allow = new WebhookAllowList(config.tenancySettings.webhookAllow);
  }

  /**
   * A shell session of `ref` ended; `record` receives the `shell.notified` data when a
   * notification was due. Never throws, never waits.
   */
  exited(ref: SessionRef, exited: ShellExitedData, tail: string, record: (data: ShellNotifiedData) => void): void {
    // Most exits are foreground ones: they need no read of the session.
    if (!exited.backgrounded || this.stopping.signal.aborted) return;
    const work = this.notify(ref, exited, tail, record).catch((error: unknown) => this.warn(ref, 'exit notification failed', error));
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /**
   * Called by the ShellHost once it has ended its processes (Nest runs a module's shutdown hooks
   * at once, so this cannot be a hook of its own): their exits are notified too, within the grace.
   */
  async stop(): Promise<void> {
    await Promise.race([Promise.allSettled([...this.pending]), sleep(SHUTDOWN_GRACE_MS, undefined, { ref: false })]);
    this.stopping.abort();
  }

  private async notify(ref: SessionRef, exited: ShellExitedData, tail: string, record: (data: ShellNotifiedData) => void): Promise<void> {
    const { settings } = await this.sessions.settings(ref);
    // A deleted session has no one to tell.
    if (!settings) return;
    const notice = exitNotice({
      exited,
      tail,
      sessionId: ref.sessionId,
      agentId: agentIdOfScopeKey(exited.scope.slice(ref.tenant.length + 1)),
      shell: effectiveShellConfig(this.config, settings.shell),
      notifyUrl: settings.notifyUrl,
    });
    if (!notice || settings.notifyUrl === null) return;
    const ids = { sessionId: exited.sessionId, scope: exited.scope };
    const release = this.limit.acquire(ref.tenant);
    if (!release) {
      this.metrics.shellNotified('dropped');
      this.warn(ref, 'exit notifications over their in-flight bound; dropped', OVER_BOUND_ERROR);
      record({ ...ids, status: 'failed', attempts: 0, error: OVER_BOUND_ERROR });
      return;
    }
    let outcome: NotificationOutcome;
    try {
      outcome = await deliverNotification({
        url: settings.notifyUrl,
        body: notice,
        // Read per delivery: the deployment's mode can change (SPEC §10 "Mode").
        addressPolicy: new WebhookAddressPolicy(this.allow, this.tenancy.mode),
        secret: this.config.webhookSecrets.get(ref.tenant),
        signal: this.stopping.signal,
      });
    } finally {
      release();
    }
    this.metrics.shellNotified(outcome.status);
    if (outcome.status === 'failed') this.warn(ref, 'exit notification not delivered', outcome.error ?? 'failed');
    record({ ...ids, ...outcome });
  }

  private warn(ref: SessionRef, message: string, cause: unknown): void {
    const admitted = this.warnings.admit(cause);
    if (admitted) this.logger.warn({ tenant: ref.tenant, sessionId: ref.sessionId, err: cause, suppressed: admitted.suppressed }, message);
  }
}

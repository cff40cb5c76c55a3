import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import type { SessionRef } from '@codemode/contracts';
import { createRedis, EventLog, KeySpace, WorkspaceRemovals } from '@codemode/events';
import { WorkspaceJanitor } from '@codemode/shell';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { ShellHost } from '../shell/shell-host.service';

/**
 * Removes this worker's workspaces of sessions that are gone (SPEC §10): a deleted session's at
 * once, on the API's removal message, and, at start and every `CODEMODE_WORKSPACE_SWEEP_SECONDS`,
 * any whose session no longer exists (expired, or deleted while this worker was down).
 */
@Injectable()
export class WorkspaceCleanup implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly janitor: WorkspaceJanitor;
  private readonly removals: WorkspaceRemovals;
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    keys: KeySpace,
    events: EventLog,
    private readonly shell: ShellHost,
  ) {
    this.janitor = new WorkspaceJanitor({
      root: config.workspaceRoot,
      existing: (refs) => events.existing(refs),
      busy: (workspace) => shell.runsIn(workspace),
    });
    const subscriber = createRedis(config.redis, {
      name: `worker-${config.workerId}-workspaces`,
      subscriber: true,
      onError: (error) => logger.warn({ err: error.message }, 'Redis connection error; retrying'),
    });
    this.removals = new WorkspaceRemovals(subscriber, keys, (ref) => void this.remove(ref));
  }

  onApplicationBootstrap(): void {
    this.removals.start().catch((error: unknown) => this.logger.warn({ err: error }, 'could not subscribe to workspace removals'));
    this.timer = setInterval(() => void this.sweep(), this.config.workspaceSweepSeconds * 1000);
    this.timer.unref();
    void this.sweep();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.removals.close().catch(() => undefined);
  }

  /** One sweep; a failed one is retried by the next. */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const { removed } = await this.janitor.sweep();
      if (removed > 0) this.logger.info({ removed }, 'removed workspaces of sessions that are gone');
    } catch (error) {
      this.logger.warn({ err: error }, 'workspace sweep failed; retrying at the next one');
    } finally {
      this.sweeping = false;
    }
  }

  private async remove(ref: SessionRef): Promise<void> {
    try {
      await this.shell.removeWorkspace(ref);
      this.logger.info({ tenant: ref.tenant, sessionId: ref.sessionId }, 'removed the workspace of a deleted session');
    } catch (error) {
      this.logger.warn({ tenant: ref.tenant, sessionId: ref.sessionId, err: error }, 'could not remove a workspace; the sweep retries');
    }
  }
}

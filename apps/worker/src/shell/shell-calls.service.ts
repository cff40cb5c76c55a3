import { Inject, Injectable } from '@nestjs/common';
import type { ShellJob } from '@codemode/contracts';
import { publishAnswer, type RedisClient } from '@codemode/events';
import { SHELL_TEXTS, TenantCallBound } from '@codemode/shell';
import type { Logger } from '@codemode/telemetry';
import { LOGGER, REDIS } from '../core/tokens';
import { WorkerTenantLimits } from '../quotas/worker-tenant-limits.service';
import { ShellHost } from './shell-host.service';

/**
 * REST shell calls routed to this worker (from its own queue or the shared `shell` queue), run
 * detached from the consumer that took them (SPEC §10 fate isolation): a call may wait up to its
 * yield window, a 30 s poll or a node's answer, and held by a consumer such waits of one tenant
 * would fill the queue's concurrency, stalling another tenant's resumes, aborts, tool results and
 * shell calls behind them. The job is done once the call has started; the call answers its
 * caller itself. Each tenant has at most `maxShellCalls` in flight here; past it a call is
 * answered at once with the shell-call quota refusal.
 */
@Injectable()
export class ShellCalls {
  private readonly bound: TenantCallBound;

  constructor(
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly shell: ShellHost,
    private readonly limits: WorkerTenantLimits,
  ) {
    this.bound = new TenantCallBound((error) => this.logger.warn({ err: error }, 'a shell call could not answer its caller'));
  }

  /** Starts the call, or answers the refusal; resolves once either is under way, never after the call's wait. */
  async take(job: ShellJob): Promise<void> {
    if (this.bound.start(job.tenant, this.limits.shellCallMax(job.tenant), () => this.shell.handle(job))) return;
    this.limits.shellCallRefused(job.tenant);
    await publishAnswer(this.redis, job.replyTo, job.requestId, { text: SHELL_TEXTS.shellCallQuota, details: { status: 'failed' } });
  }

  /** Shutdown, once no consumer takes jobs: every call started answers its caller before the processes and Redis close. */
  drain(): Promise<void> {
    return this.bound.drain();
  }
}

import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import type { DueRun } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';

/**
 * A sweep of a run index (`ParkedRunIndex`, `LiveRunIndex`) on every worker once per lease: one
 * sweep at a time, at most `batch` due runs, each settled by the subclass (fenced there, so two
 * sweepers cannot both end a run). A sweep that fails is logged and tried again at the next one.
 */
export abstract class RunIndexSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  protected constructor(
    protected readonly config: AppConfig,
    protected readonly logger: Logger,
    private readonly dueRuns: { due(now: number, limit: number): Promise<DueRun[]> },
    private readonly what: { name: string; batch: number },
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.config.presenceTtlMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** One sweep; answers how many runs it ended. */
  async sweep(now = Date.now()): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      let ended = 0;
      for (const due of await this.dueRuns.due(now, this.what.batch)) {
        if (await this.settle(due, now)) ended += 1;
      }
      return ended;
    } catch (error) {
      this.logger.warn({ err: error }, `${this.what.name} sweep failed; retrying at the next one`);
      return 0;
    } finally {
      this.sweeping = false;
    }
  }

  /** Decides one due run; true when this call ended it. */
  protected abstract settle(due: DueRun, now: number): Promise<boolean>;
}

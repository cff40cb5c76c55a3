import { DelayedError, type Job } from 'bullmq';
import type { Logger } from '@codemode/telemetry';

/**
 * Jobs whose work goes on after their consumer let them go (SPEC §10 fate isolation: a cell that
 * waits only on the host gives its slot back). Such a job stays `active` with its lock, renewed
 * here every half of `lockMs` as BullMQ's own lock manager would: the lock is the worker's lease
 * (SPEC §6), so a worker killed while the work goes on has its job re-delivered and recovered as
 * any other. Once the work settles the job is completed (or failed) with its lock token.
 */
export class DetachedJobs {
  private readonly held = new Set<Promise<void>>();

  constructor(
    private readonly lockMs: number,
    private readonly logger: Logger,
    private readonly role: string,
  ) {}

  get size(): number {
    return this.held.size;
  }

  /** Keeps `job` locked while `work` runs, then finishes it. */
  hold(job: Job, token: string, work: Promise<void>): void {
    const fields = { consumer: this.role, job: job.name, jobId: job.id };
    let renewing = true;
    const extend = (): void => {
      job.extendLock(token, this.lockMs).then(
        (extended) => {
          if (extended || !renewing) return;
          // Another worker took it as stalled (this one stopped renewing too long): recovery is
          // fenced by the run's epoch, so this worker's work cannot overwrite it.
          renewing = false;
          clearInterval(renew);
          this.logger.warn(fields, 'lost the lock of a detached job; another worker may recover its run');
        },
        (error: unknown) => this.logger.warn({ ...fields, err: error }, 'could not renew the lock of a detached job'),
      );
    };
    // Every half lock, and at once: BullMQ's last renewal may be up to half a lock old already.
    const renew = setInterval(extend, Math.max(250, Math.floor(this.lockMs / 2)));
    extend();
    const finished = work
      .then(
        () => job.moveToCompleted(undefined, token, false),
        (error: unknown) => {
          // The work moved the job itself (to look at it again later).
          if (error instanceof DelayedError) return;
          this.logger.error({ ...fields, err: error }, 'queue job failed; its run may need recovery');
          return job.moveToFailed(error instanceof Error ? error : new Error(String(error)), token, false);
        },
      )
      .then(
        () => undefined,
        (error: unknown) => {
          if (renewing) this.logger.warn({ ...fields, err: error }, 'could not finish a detached job; it is re-delivered as stalled');
        },
      )
      .finally(() => {
        renewing = false;
        clearInterval(renew);
        this.held.delete(finished);
      });
    this.held.add(finished);
  }

  /** Waits until every held job's work has settled and the job was finished. */
  async drain(): Promise<void> {
    while (this.held.size > 0) await Promise.all([...this.held]);
  }
}

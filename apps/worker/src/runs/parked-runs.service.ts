import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { RunLedger, RunOwnership } from '@codemode/events';
import { SandboxPool } from '@codemode/sandbox';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { WorkerTenantLimits } from '../quotas/worker-tenant-limits.service';
import { ParkedImages } from './parked-images.service';
import { ParkedRunRegistry, type ParkedRun } from './parked-run-registry';

/** Why an evicted run was released (SPEC §10 "Parked memory", §12). */
const EVICTED_REASON = 'evicted from memory to its image: the worker’s parked slots or parked memory were full';

/**
 * The runs parked on this worker. Each has two halves that must change together: its VM, parked in
 * the sandbox pool, and what the worker keeps beside it to resume, expire or abort it (the
 * registry, with its expiry timer). Every change to either goes through here. Also owns what
 * becomes of a parked run no wait resumes: its expiry, its loss with its sandbox thread, giving
 * it up at shutdown, and dropping it after this worker's lease lapsed.
 */
@Injectable()
export class ParkedRuns implements OnModuleDestroy {
  private readonly registry: ParkedRunRegistry;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runs: RunLedger,
    private readonly pool: SandboxPool,
    private readonly ownership: RunOwnership,
    private readonly limits: WorkerTenantLimits,
    private readonly images: ParkedImages,
  ) {
    this.registry = new ParkedRunRegistry((run) => void this.expire(run));
    // A run whose image is in Redis outlives its thread too (SPEC §12): released, not lost.
    this.pool.onRunsLost((runIds, reason) => {
      for (const runId of runIds) void (this.registry.get(runId)?.imaged ? this.vmGone(runId, reason) : this.lose(runId, reason));
    });
    // SPEC §10, §12: the pool's slots and memory budget bound the VMs kept in memory; a run whose
    // image is in Redis may leave, unless a call of its is in progress: evicting would abort it,
    // and its restore would then fail the run for a call whose effect may have happened. A call
    // waiting for an approval or the platform is no host work (a record in Redis): made again
    // where the run is restored.
    this.pool.evictWith({
      evictable: (runId) => this.registry.get(runId)?.imaged === true && !this.pool.hasHostWork(runId),
      evicted: (runId) => void this.vmGone(runId, EVICTED_REASON),
    });
  }

  onModuleDestroy(): void {
    this.registry.close();
  }

  /** A run whose leg just parked its VM in the pool: kept until resumed, aborted or expired. */
  park(run: ParkedRun): void {
    this.registry.park(run);
  }

  /** A run's park is recorded: VMs that may leave now go, while the parked VMs are past the worker's memory budget. */
  keepWithinBudget(): void {
    this.pool.keepWithinBudget();
  }

  get(runId: string): ParkedRun | undefined {
    return this.registry.get(runId);
  }

  /**
   * Takes a run out for a resume: its VM stays in the pool, but it can no longer expire, be handed
   * over or be dropped under the resume. Give it back with `park` if the resume is not taken.
   */
  takeForResume(runId: string): ParkedRun | undefined {
    return this.registry.take(runId);
  }

  /** Drops a parked run from this worker: out of the registry, its VM discarded. Undefined when not parked here. */
  drop(runId: string): ParkedRun | undefined {
    const run = this.registry.take(runId);
    if (run) this.pool.discard(runId);
    return run;
  }

  /**
   * Drops the run whatever state it is in here (parked, taken for a resume, running a leg, or
   * parked by a leg that did not register it): a leg in progress ends `aborted`. Answers the
   * parked run it held, and whether the pool had its VM at all.
   */
  discard(runId: string): { parked: ParkedRun | undefined; discarded: boolean } {
    const parked = this.registry.take(runId);
    return { parked, discarded: this.pool.discard(runId) };
  }

  /** A parked run this worker dropped has ended (aborted): its quota place and its image go now, not at their expiry. */
  ended(run: ParkedRun): void {
    if (run.holdsParkedQuota) this.limits.releaseParked(run.ref, run.runId);
    if (run.imaged) this.images.drop(run.ref, run.runId);
  }

  /**
   * The outcome of a leg could not be recorded (the run was taken over or ended meanwhile, or
   * Redis stayed away): a VM parked for it must not stay in memory and hold a parked slot.
   */
  dropUnrecorded(runId: string): void {
    const run = this.drop(runId);
    if (run) this.limits.releaseParked(run.ref, runId);
  }

  /**
   * Shutdown: parked VMs cannot stay here. Runs with an image in Redis (SPEC §12) and replay-safe
   * runs are released (the next wait restores or replays them on any worker at once); the others
   * (no image could be made) end as `run.lost`. Every write is fenced by the run's epoch, so a run
   * another worker already took is left alone.
   */
  async giveUpAll(reason: string): Promise<void> {
    const runIds = [...this.registry.runIds()];
    await Promise.all(
      runIds.map((runId) => {
        const run = this.registry.get(runId);
        return run?.imaged || run?.restartSafe ? this.handOver(runId, reason) : this.lose(runId, reason);
      }),
    );
  }

  /**
   * After this worker's lease lapsed: keeps each parked run that is still this worker's at the
   * same epoch and still waiting (nobody acted on it meanwhile), and drops the others from memory
   * without writing anything (another worker took them over, or the API ended them).
   */
  async reconcile(): Promise<{ kept: number; dropped: number }> {
    let kept = 0;
    let dropped = 0;
    for (const runId of [...this.registry.runIds()]) {
      const parked = this.registry.get(runId);
      if (!parked) continue;
      const now = await this.runs.get(parked.ref, runId);
      if (now?.status === 'waiting' && now.owner === this.config.workerId && now.epoch === parked.epoch) {
        kept += 1;
        continue;
      }
      if (this.registry.get(runId) !== parked) continue;
      this.drop(runId);
      dropped += 1;
    }
    return { kept, dropped };
  }

  /** Drops a parked run (imaged or replay-safe) from memory and releases it in the ledger: the next wait restores or replays it. */
  async handOver(runId: string, reason: string): Promise<void> {
    const run = this.drop(runId);
    if (run) await this.release(run, reason);
  }

  /** Its VM left the pool (evicted, or died with its thread) while its image is in Redis: out of the registry, released. */
  private async vmGone(runId: string, reason: string): Promise<void> {
    const run = this.registry.take(runId);
    if (run) await this.release(run, reason);
  }

  /**
   * Releases in the ledger a parked run whose VM this worker no longer has; its quota place stays
   * (it is still parked), counting from now on what it holds: its image in Redis (SPEC §10).
   */
  private async release(run: ParkedRun, reason: string): Promise<void> {
    const runId = run.runId;
    const fields = { tenant: run.ref.tenant, sessionId: run.ref.sessionId, runId };
    if (run.holdsParkedQuota) await this.limits.recountParked(run.ref, runId, run.imaged ? (run.imageBytes ?? 0) : 0);
    try {
      const released = await this.runs.release(run.ref, runId, { workerId: this.config.workerId, epoch: run.epoch, reason });
      this.logger.info({ ...fields, released, reason }, 'parked run handed over');
    } catch (error) {
      this.logger.warn({ ...fields, err: error }, 'could not release a parked run; its lease will lapse');
    }
  }

  /** The registry's timer: the run is already out of it; its VM and quota place go too. */
  private async expire(run: ParkedRun): Promise<void> {
    this.pool.discard(run.runId);
    this.limits.releaseParked(run.ref, run.runId);
    await this.recordEnd(run, 'run.expired', () => this.ownership.expire(run.ref, run.runId, run.epoch));
  }

  /** Its VM is gone (its sandbox thread died, or this worker shuts down): the run is lost. */
  private async lose(runId: string, reason: string): Promise<void> {
    const run = this.registry.take(runId);
    if (!run) return;
    this.limits.releaseParked(run.ref, runId);
    await this.recordEnd(run, 'run.lost', () => this.ownership.lose(run.ref, runId, run.epoch, { reason }));
  }

  private async recordEnd(run: ParkedRun, type: 'run.expired' | 'run.lost', end: () => Promise<boolean>): Promise<void> {
    const fields = { tenant: run.ref.tenant, sessionId: run.ref.sessionId, runId: run.runId, type };
    try {
      if (await end()) this.logger.info(fields, 'parked run ended');
    } catch (error) {
      this.logger.warn({ ...fields, err: error }, 'could not record the end of a parked run');
    }
  }
}

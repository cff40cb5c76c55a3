import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { ParkedRunExpiry, RunEnds, RunLedger } from '@codemode/events';
import { SandboxPool } from '@codemode/sandbox';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { WorkerTenantLimits } from '../quotas/worker-tenant-limits.service';
import { WorkerRun, WorkerRuns } from './worker-run';

/** Why an evicted run was released (SPEC §10 "Parked memory", §12). */
const EVICTED_REASON = 'evicted from memory to its image: the worker’s parked slots or parked memory were full';

/**
 * The runs on this worker (`WorkerRuns`) kept in step with their VMs in the sandbox pool: every
 * move of a run's residency that touches its VM goes through here. Also owns what becomes of a
 * parked run no wait resumes: its expiry, its loss with its sandbox thread, its hand-over at
 * shutdown or eviction, and dropping it after this worker's lease lapsed.
 */
@Injectable()
export class ResidentRuns implements OnModuleDestroy {
  private readonly runs: WorkerRuns;
  /** The one enforcer of parked-run expiry; this worker's timer is its holder's ask. */
  private readonly expiry: ParkedRunExpiry;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly ledger: RunLedger,
    private readonly pool: SandboxPool,
    private readonly limits: WorkerTenantLimits,
    private readonly ends: RunEnds,
  ) {
    this.expiry = new ParkedRunExpiry(ends);
    this.runs = new WorkerRuns((run) => void this.expired(run));
    // A run whose image is in Redis outlives its thread too (SPEC §12): released, not lost.
    this.pool.onRunsLost((runIds, reason) => {
      for (const runId of runIds) {
        const run = this.runs.parked(runId);
        if (run) void (run.imaged ? this.release(run, reason) : this.lose(run, reason));
      }
    });
    // SPEC §10, §12: the pool's slots and memory budget bound the VMs kept in memory; a run whose
    // image is in Redis may leave, unless a call of its is in progress: evicting would abort it,
    // and its restore would then fail the run for a call whose effect may have happened. A call
    // waiting for an approval or the platform is no host work (a record in Redis): made again
    // where the run is restored.
    this.pool.evictWith({
      evictable: (runId) => this.runs.parked(runId)?.imaged === true && !this.pool.hasHostWork(runId),
      evicted: (runId) => {
        const run = this.runs.parked(runId);
        if (run) void this.release(run, EVICTED_REASON);
      },
    });
  }

  onModuleDestroy(): void {
    this.runs.close();
  }

  /**
   * A leg of the run starts on this worker. A run of the same id still here is of an older epoch
   * (kept after it was released or taken over): stale, its VM discarded first.
   */
  begin(run: WorkerRun): void {
    const stale = this.runs.get(run.runId);
    if (stale && stale !== run) this.drop(stale);
    this.runs.begin(run);
  }

  /** This worker's VM of the run, if it still has one, is of an older epoch than a takeover's: dropped, nothing written. */
  dropStale(runId: string): void {
    const stale = this.runs.get(runId);
    if (stale) this.drop(stale);
    else this.pool.discard(runId);
  }

  get(runId: string): WorkerRun | undefined {
    return this.runs.get(runId);
  }

  /** The run when it is parked here (not running, not being resumed, not leaving). */
  parked(runId: string): WorkerRun | undefined {
    return this.runs.parked(runId);
  }

  /** A leg parked its VM in the pool and its park is being recorded: kept until resumed, aborted or expired. */
  park(run: WorkerRun): void {
    this.runs.move(run, 'park');
  }

  /** A run's park is recorded: VMs that may leave now go, while the parked VMs are past the worker's memory budget. */
  keepWithinBudget(): void {
    this.pool.keepWithinBudget();
  }

  /**
   * Takes a parked run for a resume: its VM stays in the pool, but it can no longer expire, be
   * handed over or be evicted under the resume. `giveBack` if the take is refused, `resumed` once it lands.
   */
  take(runId: string): WorkerRun | undefined {
    const run = this.runs.parked(runId);
    if (run) this.runs.move(run, 'take');
    return run;
  }

  giveBack(run: WorkerRun): void {
    this.runs.move(run, 'giveBack');
  }

  resumed(run: WorkerRun): void {
    this.runs.move(run, 'resume');
  }

  /** The run ended (its terminal event is written, or being written by RunEnds): it leaves the worker. */
  ended(run: WorkerRun): void {
    if (run.residency !== 'gone') this.runs.move(run, 'end');
  }

  /**
   * Drops the run from this worker without writing anything (another worker took it over, or its
   * outcome could not be recorded): its VM is discarded and any parked-run quota place it holds given back.
   */
  dropUnrecorded(run: WorkerRun): void {
    this.drop(run);
    if (run.holdsParkedQuota) this.limits.freeParked(run.ref, run.runId);
  }

  /**
   * Discards the run's VM whatever state it is in here: a leg in progress ends `aborted`. Answers
   * the run as it was here (undefined when not here) and whether the pool had its VM at all.
   */
  discardVm(runId: string): { run: WorkerRun | undefined; discarded: boolean } {
    return { run: this.runs.get(runId), discarded: this.pool.discard(runId) };
  }

  /**
   * Shutdown: parked VMs cannot stay here. Runs with an image in Redis (SPEC §12) and replay-safe
   * runs are released (the next wait restores or replays them on any worker at once); the others
   * (no image could be made) end as `run.lost`. Every write is fenced by the run's epoch, so a run
   * another worker already took is left alone.
   */
  async giveUpAll(reason: string): Promise<void> {
    const parked = this.runs.all().filter((run) => run.residency === 'parked');
    await Promise.all(parked.map((run) => (run.imaged || run.restartSafe ? this.handOver(run, reason) : this.lose(run, reason))));
  }

  /**
   * After this worker's lease lapsed: keeps each parked run that is still this worker's at the
   * same epoch and still waiting (nobody acted on it meanwhile), and drops the others from memory
   * without writing anything (another worker took them over, or the API ended them).
   */
  async reconcile(): Promise<{ kept: number; dropped: number }> {
    let kept = 0;
    let dropped = 0;
    for (const run of this.runs.all()) {
      if (run.residency !== 'parked') continue;
      const now = await this.ledger.get(run.ref, run.runId);
      if (now?.status === 'waiting' && now.owner === this.config.workerId && now.epoch === run.epoch) {
        kept += 1;
        continue;
      }
      if (run.residency !== 'parked') continue;
      this.drop(run);
      dropped += 1;
    }
    return { kept, dropped };
  }

  /** Drops a parked run (imaged or replay-safe) from memory and releases it in the ledger: the next wait restores or replays it. */
  async handOver(run: WorkerRun, reason: string): Promise<void> {
    if (run.residency !== 'parked') return;
    this.pool.discard(run.runId);
    await this.release(run, reason);
  }

  /** Out of this worker and its VM out of the pool, nothing written, nothing given back: a run that is not this worker's any more. */
  drop(run: WorkerRun): void {
    if (run.residency !== 'gone') this.runs.move(run, 'drop');
    this.pool.discard(run.runId);
  }

  /**
   * Releases in the ledger a parked run whose VM this worker no longer has (handed over, evicted,
   * or gone with its thread); its quota place stays (it is still parked), counting from now on
   * what it holds: its image in Redis (SPEC §10).
   */
  private async release(run: WorkerRun, reason: string): Promise<void> {
    this.runs.move(run, 'handOver');
    if (run.holdsParkedQuota) await this.limits.recountParked(run.ref, run.runId, run.imaged ? run.imageBytes : 0);
    // A read that answered while the run was parked may have events held (RunEventWriter.trail): they go before its release.
    await run.host.landed();
    try {
      const released = await this.ledger.release(run.ref, run.runId, { workerId: this.config.workerId, epoch: run.epoch, reason });
      this.logger.info({ ...run.fields, released, reason }, 'parked run handed over');
    } catch (error) {
      this.logger.warn({ ...run.fields, err: error }, 'could not release a parked run; its lease will lapse');
    } finally {
      this.runs.move(run, 'leave');
    }
  }

  /**
   * The expiry timer moved the run out (`end`) once `pastExpiry` held; its VM goes too, and the
   * holder asks ParkedRunExpiry, which ends a due run `run.expired` for its holder.
   */
  private async expired(run: WorkerRun): Promise<void> {
    this.pool.discard(run.runId);
    const { ref, runId, epoch, holdsParkedQuota, imaged, expiresAt } = run;
    const expiring = { ref, runId, epoch, holdsParkedQuota, imaged, expiresAt, owner: this.config.workerId };
    await this.recordEnd(run, 'run.expired', async () => (await this.expiry.settle(expiring, 'holder')).ended);
  }

  /** Its VM is gone (its sandbox thread died, or this worker shuts down) and it has no image: the run is lost. */
  private async lose(run: WorkerRun, reason: string): Promise<void> {
    this.runs.move(run, 'end');
    await this.recordEnd(run, 'run.lost', () => this.ends.lose(run, { reason }));
  }

  private async recordEnd(run: WorkerRun, type: 'run.expired' | 'run.lost', end: () => Promise<boolean>): Promise<void> {
    const fields = { ...run.fields, type };
    // As for a release: the events held for its reads go before its end.
    await run.host.landed();
    try {
      if (await end()) this.logger.info(fields, 'parked run ended');
    } catch (error) {
      this.logger.warn({ ...fields, err: error }, 'could not record the end of a parked run');
    }
  }
}

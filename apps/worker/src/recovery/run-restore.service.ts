import { Inject, Injectable } from '@nestjs/common';
import type { RunView, SessionRef } from '@codemode/contracts';
import type { AppConfig } from '@codemode/config';
import { EventLog } from '@codemode/events';
import { checkBinding, RUN_LOST_PENDING_CALL_MESSAGE, SandboxPool } from '@codemode/sandbox';
import { failedOutcome, type CellOutcome } from '@codemode/cells';
import { WorkerMetrics, type Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { LegRunner, type Leg } from '../runs/leg-runner.service';
import { ParkedImages, type LoadedParkedImage } from '../runs/parked-images.service';
import { ResidentRuns } from '../runs/resident-runs.service';
import { WorkerRun } from '../runs/worker-run';
import { ToolHosts } from '../tools/tool-hosts.service';
import { restorePlan } from './restore-plan';
import { recordedSpec, runHistory } from './run-history';

/**
 * SPEC §12: resumes a parked run on this worker from its image in Redis, once its owner is gone
 * (lease lapsed, released or evicted): the VM restored into a new instance of one of this
 * worker's threads, the worker's state of the run rebuilt beside it, the calls open at the park
 * settled from the log, made again, or declared lost; then the resumed leg runs and is recorded.
 */
@Injectable()
export class RunRestore {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly events: EventLog,
    private readonly images: ParkedImages,
    private readonly resident: ResidentRuns,
    private readonly pool: SandboxPool,
    private readonly toolHosts: ToolHosts,
    private readonly legs: LegRunner,
    private readonly metrics: WorkerMetrics,
  ) {}

  /**
   * The run's image when this worker can restore it: written at the run's current epoch, by this
   * wasm binary and guest prelude version. Null otherwise (missing, stale, or another build's).
   */
  async usableImage(ref: SessionRef, run: RunView, log: Logger): Promise<LoadedParkedImage | null> {
    const loaded = await this.images.load(ref, run.runId);
    if (!loaded) return null;
    if (loaded.stored.epoch !== run.epoch) {
      log.warn({ imageEpoch: loaded.stored.epoch, epoch: run.epoch }, 'parked run image is of an older epoch; not restored');
      return null;
    }
    try {
      checkBinding(loaded.stored, this.pool.imageBinding());
    } catch (error) {
      log.warn({ err: error }, 'parked run image refused: another wasm binary or guest prelude version');
      return null;
    }
    return loaded;
  }

  /** Resumes a run this worker just took over (at `epoch`, its `run.resumed` written) from its image. */
  async restoreTaken(ref: SessionRef, run: RunView, epoch: number, loaded: LoadedParkedImage, replyTo: string): Promise<void> {
    const started = Date.now();
    const log = this.logger.child({ tenant: ref.tenant, sessionId: ref.sessionId, runId: run.runId });
    // A VM of this run still here is of an older epoch (released while this worker kept it): stale.
    this.resident.dropStale(run.runId);
    // Read after the takeover: the old owner can no longer add to it (fencing).
    const events = await this.events.runEvents(ref, run.runId, Date.parse(run.createdAt));
    const history = runHistory(events);
    const { record } = loaded;
    // An image of an older build records the shell settings and agent its run.requested lacks.
    const spec = recordedSpec(history, record, this.config.shellDefaults);
    if (!spec) throw new Error('run.requested is missing from the log');
    const host = await this.toolHosts.create(ref, run.runId, epoch, spec);
    host.adoptParkedState(record.host);
    const plan = restorePlan(record.calls, events, host.guestCatalog());
    this.metrics.resumed('image');
    let leg: Leg;
    if ('lost' in plan) {
      log.warn({ callId: plan.lost }, 'restored run had a pending call that cannot be settled or made again');
      leg = { kind: 'none', outcome: lostCallOutcome() };
    } else {
      leg = { kind: 'restore', seed: history.recovery?.seed, image: loaded.stored.image, plan };
    }
    const restored = new WorkerRun(ref, run.runId, epoch, spec, host, {
      priorOutputBytes: record.priorOutputBytes,
      holdsParkedQuota: true,
    });
    this.resident.begin(restored);
    const result = await this.legs.run(restored, leg, replyTo, log, started);
    this.metrics.recovered('restored');
    log.info({ status: result.status, durationMs: Date.now() - started }, 'parked run restored from its image');
  }
}

/** SPEC §12: an in-flight call at the park that is neither in the log nor replay-safe. */
function lostCallOutcome(): CellOutcome {
  return failedOutcome(
    { code: 'runtime_unavailable', phase: 'host', error: RUN_LOST_PENDING_CALL_MESSAGE },
    { bridgeDispatchStarted: true },
  );
}

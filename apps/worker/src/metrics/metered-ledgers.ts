import type { RedisClient } from '@codemode/events';
import { EventLog, RunLedger, StaleEpochError, type KeySpace, type ScriptLoader } from '@codemode/events';
import { SessionStore } from '@codemode/store';
import type { Logger, WorkerMetrics } from '@codemode/telemetry';

/** Where metered writes report: the append timer, the stale-write counter, and the log. */
export interface WriteMeter {
  metrics: WorkerMetrics;
  logger: Logger;
}

/**
 * Times one event-log write, and counts and logs it when fencing refused it. Every write the
 * worker makes goes through the classes below, so a stale epoch is reported wherever it
 * surfaces, whichever caller catches it afterwards.
 */
export async function meteredWrite<T>(meter: WriteMeter, write: () => Promise<T>): Promise<T> {
  const end = meter.metrics.eventAppendDuration.startTimer();
  try {
    return await write();
  } catch (error) {
    reportRefused(meter, error);
    throw error;
  } finally {
    end();
  }
}

function reportRefused(meter: WriteMeter, error: unknown): void {
  if (!(error instanceof StaleEpochError)) return;
  meter.metrics.staleWritesRejected.inc();
  meter.logger.warn(
    { runId: error.runId, epoch: error.epoch, runEpoch: error.storedEpoch },
    'write refused: stale epoch (the run was taken over by another worker)',
  );
}

/** The worker's EventLog: tool and shell events. */
export class MeteredEventLog extends EventLog {
  constructor(
    redis: RedisClient,
    keys: KeySpace,
    scripts: ScriptLoader,
    private readonly meter: WriteMeter,
  ) {
    super(redis, keys, scripts);
  }

  override append(...args: Parameters<EventLog['append']>): ReturnType<EventLog['append']> {
    return meteredWrite(this.meter, () => super.append(...args));
  }

  /** One timed write however many events; each event fencing refused is reported. */
  override async appendAll(...args: Parameters<EventLog['appendAll']>): ReturnType<EventLog['appendAll']> {
    const outcomes = await meteredWrite(this.meter, () => super.appendAll(...args));
    for (const outcome of outcomes) reportRefused(this.meter, outcome);
    return outcomes;
  }
}

/** The worker's RunLedger: claims, parks, resumes and terminal events of runs. */
export class MeteredRunLedger extends RunLedger {
  constructor(
    redis: RedisClient,
    keys: KeySpace,
    scripts: ScriptLoader,
    private readonly meter: WriteMeter,
  ) {
    super(redis, keys, scripts);
  }

  override start(...args: Parameters<RunLedger['start']>): ReturnType<RunLedger['start']> {
    return meteredWrite(this.meter, () => super.start(...args));
  }

  override finish(...args: Parameters<RunLedger['finish']>): ReturnType<RunLedger['finish']> {
    return meteredWrite(this.meter, () => super.finish(...args));
  }

  override resume(...args: Parameters<RunLedger['resume']>): ReturnType<RunLedger['resume']> {
    return meteredWrite(this.meter, () => super.resume(...args));
  }

  override park(...args: Parameters<RunLedger['park']>): ReturnType<RunLedger['park']> {
    return meteredWrite(this.meter, () => super.park(...args));
  }

  override append(...args: Parameters<RunLedger['append']>): ReturnType<RunLedger['append']> {
    return meteredWrite(this.meter, () => super.append(...args));
  }
}

/** The worker's SessionStore: `store.committed` at completion is fenced by the run's epoch too. */
export class MeteredSessionStore extends SessionStore {
  constructor(
    redis: RedisClient,
    keys: KeySpace,
    scripts: ScriptLoader,
    private readonly meter: WriteMeter,
  ) {
    super(redis, keys, scripts);
  }

  override commit(...args: Parameters<SessionStore['commit']>): ReturnType<SessionStore['commit']> {
    return meteredWrite(this.meter, () => super.commit(...args));
  }
}

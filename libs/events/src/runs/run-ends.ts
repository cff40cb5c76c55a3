import { RUN_END_REASONS, type CodeModeResult, type RunStatus, type SessionRef } from '@codemode/contracts';
import { RunAlreadyEndedError, StaleEpochError } from '../platform/errors';
import type { ParkedImageStore } from './parked-image-store';
import type { LiveRunIndex } from './parked-run-index';
import type { RunLedger } from './run-ledger';
import { resultReply } from './run-replies';

/**
 * A run being ended, at the epoch its ender holds or saw. `holdsParkedQuota` / `imaged`: what a
 * worker that kept it parked holds for it (a parked-run quota place, an image in Redis).
 */
export interface EndingRun {
  ref: SessionRef;
  runId: string;
  epoch: number;
  holdsParkedQuota?: boolean;
  imaged?: boolean;
}

/**
 * What a run held outside its log, given back once it ends (the worker's: its parked-run quota
 * place and its image). `ended`: this end was the one written (false: it had ended already, or
 * moved to a newer epoch, so what it holds is another's).
 */
export interface RunHoldings {
  free(run: EndingRun, ended: boolean): void;
}

/** Gives back a parked run's place in its tenant's parked-run quota (libs/fleet's `TenantQuotaLedger`). */
export interface ParkedQuotaFree {
  freeParked(tenant: string, runId: string): Promise<void>;
}

/**
 * A parked run's holdings: its place in its tenant's parked-run quota (SPEC §10) and its image in
 * Redis (SPEC §12), each given back best effort (a place nobody gives back stops counting at the
 * run's expiry, an image expires with it). The place goes whether or not this end was the one
 * written (the run is not parked any more either way); the image only if it was: a run that
 * moved to a newer epoch is another worker's, image included.
 */
export class ParkedRunHoldings implements RunHoldings {
  constructor(
    private readonly quotas: ParkedQuotaFree,
    private readonly images: Pick<ParkedImageStore, 'delete'>,
    private readonly warn: (fields: { runId: string; err: unknown }, message: string) => void,
  ) {}

  free(run: EndingRun, ended: boolean): void {
    const runId = run.runId;
    if (run.holdsParkedQuota) {
      this.quotas
        .freeParked(run.ref.tenant, runId)
        .catch((err: unknown) => this.warn({ runId, err }, 'could not free a parked-run quota place'));
    }
    if (ended && (run.holdsParkedQuota || run.imaged)) {
      this.images.delete(run.ref, runId).catch((err: unknown) => this.warn({ runId, err }, 'could not remove a parked run image'));
    }
  }
}

/** How an end is written (`RunEnds.finish`): to whom it is published, what goes beside it, and its fences. */
export interface EndWrite {
  replyTo?: string;
  beside?: () => void;
  claimedBy?: string;
  trailMark?: string;
}

/** What the caller of a lost run is answered. */
export interface LostAnswer {
  replyTo: string;
  result: CodeModeResult;
  /** Recorded as the run's result too (a run lost after it ran), or only answered (a wait told the run is unavailable). */
  recorded: boolean;
}

/**
 * How a run ends, for the API and the workers alike: the one writer of every terminal event
 * (`run.completed`, `run.failed`, `run.lost`, `run.expired`), each fenced (by the run's epoch, or
 * by its being still `requested`), and then what the run held goes: its entry in the live-run
 * index and, on a worker, its holdings. Whether a run ends, and with what, is its callers' to
 * decide (a leg's outcome; `RunOwnership`'s rules for a run nobody else will end).
 */
export class RunEnds {
  constructor(
    private readonly runs: RunLedger,
    private readonly live: Pick<LiveRunIndex, 'add' | 'remove'>,
    private readonly holdings?: RunHoldings,
  ) {}

  /**
   * `run.completed` or `run.failed` with the run's result (finish-run.lua), published to
   * `replyTo`. Throws RunAlreadyEndedError / StaleEpochError when the run ended or moved on meanwhile.
   * `beside`: commands of the caller's to send in the end's socket write, after the end script (a
   * stream entry's acknowledgement, SPEC §13); the run's live-index entry then leaves in that write
   * too, rather than in one of its own once the end is answered. An end that then fails puts the
   * entry back, due at once: the sweep looks at the run at its next pass, whatever became of it.
   * `claimedBy`: the worker claims the run in the same script (`RunLedger.finish`; SPEC §13).
   * `trailMark`: the end goes right behind the run's trailed events, written only if they all
   * landed (`RunLedger.finish`).
   */
  async finish(run: EndingRun, result: CodeModeResult, end: EndWrite = {}): Promise<void> {
    const { replyTo, beside, claimedBy, trailMark } = end;
    const type = result.status === 'completed' ? 'run.completed' : 'run.failed';
    const ending = this.runs.finish(run.ref, run.runId, { epoch: run.epoch, type, result, replyTo, claimedBy, trailMark });
    if (beside) {
      this.live.remove(run.ref, run.runId).catch(() => undefined);
      beside();
    }
    try {
      await ending;
    } catch (error) {
      if (beside) this.live.add(run.ref, run.runId, Date.now()).catch(() => undefined);
      throw error;
    }
    if (beside) this.holdings?.free(run, true);
    else this.freed(run, true);
  }

  /**
   * `run.failed` with `result` of a run still `requested` that no worker started (abandon-run.lua);
   * with `idempotencyKey` (its exec's), the key is given back: a cell that never ran does not
   * consume it. Answers the run's status, writing nothing, when it is not `requested` any more.
   * The run's caller is told the result (its request's `replyTo`), unless `byItsCaller`: the exec
   * abandoning its own run answers it itself.
   */
  async abandon(
    ref: SessionRef,
    runId: string,
    result: CodeModeResult,
    idempotencyKey?: string,
    opts: { byItsCaller?: boolean } = {},
  ): Promise<{ abandoned: true } | { abandoned: false; status: RunStatus | null }> {
    const outcome = await this.runs.abandonUnstarted(ref, runId, result, idempotencyKey, opts);
    if (outcome.abandoned) this.freed({ ref, runId, epoch: 0 }, true);
    return outcome;
  }

  /**
   * `run.lost` (default reason: its owner stopped renewing its lease). With an `answer`, its result
   * is published to its caller, and recorded with the event when `recorded`. False when it already
   * ended or moved to a newer epoch.
   */
  async lose(run: EndingRun, opts: { reason?: string; answer?: LostAnswer } = {}): Promise<boolean> {
    const { answer } = opts;
    const data = { reason: opts.reason ?? RUN_END_REASONS.ownerLost, ...(answer?.recorded ? { result: answer.result } : {}) };
    const publish = answer ? resultReply(answer.replyTo, run.runId, answer.result) : undefined;
    return this.endWith(run, () => this.runs.append(run.ref, { type: 'run.lost', runId: run.runId, epoch: run.epoch, data, publish }));
  }

  /** `run.expired`: parked past its `snapshotTtlSeconds` without a wait. False when it already ended or moved on. */
  expire(run: EndingRun): Promise<boolean> {
    const data = { reason: RUN_END_REASONS.expired };
    return this.endWith(run, () => this.runs.append(run.ref, { type: 'run.expired', runId: run.runId, epoch: run.epoch, data }));
  }

  private async endWith(run: EndingRun, append: () => Promise<unknown>): Promise<boolean> {
    let ended = true;
    try {
      await append();
    } catch (error) {
      if (!(error instanceof RunAlreadyEndedError || error instanceof StaleEpochError)) throw error;
      ended = false;
    }
    this.freed(run, ended);
    return ended;
  }

  /** Best effort: an index entry nobody removes is forgotten by the next sweep. */
  private freed(run: EndingRun, ended: boolean): void {
    if (ended) this.live.remove(run.ref, run.runId).catch(() => undefined);
    this.holdings?.free(run, ended);
  }
}

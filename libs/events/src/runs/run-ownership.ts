import type { RunStatus, SessionRef } from '@codemode/contracts';
import type { ParkedImageStore } from './parked-image-store';

/** Whether a worker's lease holds (libs/fleet's `WorkerPresence`). */
export interface WorkerLiveness {
  isAlive(workerId: string): Promise<boolean>;
}

/**
 * The process asking, when it is a worker. A run it owns itself is judged by its own memory, not
 * its lease: it may be the owner on paper without holding the run (a claim whose reply was lost,
 * a VM dropped), and its lease says nothing about that.
 */
export interface LocalRunHolder {
  readonly workerId: string;
  /** This worker has the run's VM (queued, running a leg, parked or being resumed). */
  holds(runId: string): boolean;
}

/** What the run's owner and restart safety say about it (SPEC §6). */
export type RunFate =
  /** Its owner is alive: work for it goes to the owner. */
  | 'held'
  /** Its owner is gone and its image is in Redis (SPEC §12): any worker restores it (or, refusing the image, replays or loses it). */
  | 'restore'
  /** Its owner is gone and it is replay-safe: any worker rebuilds it from its log. */
  | 'replay'
  /** Its owner is gone and it is not replay-safe: nothing can ever answer for it, it is lost. */
  | 'lose';

/** The facts about a run that decide whether its owner is gone; `owner` '' or null: none (released). */
export interface OwnedRun {
  runId: string;
  owner: string | null;
  restartSafe: boolean;
}

/**
 * The one rule for "is the run's owner gone, and who ends the run" (SPEC §6, §12), for the API and
 * the workers alike. A run's owner is gone when it has none (released or evicted) or its lease
 * lapsed; a run whose owner is gone is restored from its image when there is one (SPEC §12),
 * else replayed when it is replay-safe, else lost. Whoever finds a
 * run nobody will end (its owner gone, or past its expiry) ends it through `RunEnds`, fenced by
 * the epoch it saw: a run that moved on meanwhile is left to whoever moved it.
 */
export class RunOwnership {
  constructor(
    private readonly presence: WorkerLiveness,
    private readonly local?: LocalRunHolder,
    private readonly images?: Pick<ParkedImageStore, 'has'>,
  ) {}

  /** The run has no owner, its owner's lease lapsed, or (owned by this worker) this worker no longer has it. */
  async ownerGone(run: Pick<OwnedRun, 'runId' | 'owner'>): Promise<boolean> {
    if (!run.owner) return true;
    if (this.local && run.owner === this.local.workerId) return !this.local.holds(run.runId);
    return !(await this.presence.isAlive(run.owner));
  }

  /**
   * Where work for a run of session `ref` goes: to its live owner, to a worker restoring its image,
   * to replay, or nowhere (it is lost).
   */
  async classify(run: OwnedRun, ref?: SessionRef): Promise<RunFate> {
    if (!(await this.ownerGone(run))) return 'held';
    if (ref && this.images && (await this.images.has(ref, run.runId))) return 'restore';
    return run.restartSafe ? 'replay' : 'lose';
  }

  /**
   * A run executing a leg whose worker is gone: nothing will answer for that leg. (A running run
   * always has an owner; one without is not judged here.)
   */
  async runningOrphan(run: { runId: string; status: RunStatus | null; owner?: string | null }): Promise<boolean> {
    return run.status === 'running' && !!run.owner && (await this.ownerGone({ runId: run.runId, owner: run.owner }));
  }

  /**
   * What an `exec` or `wait` does when the leg it set going did not answer within its budget plus
   * the reply grace, and the run shows no answer of its own (unansweredLegFate). `run` is the run
   * as read then (null: gone).
   */
  async unansweredFate(run: (OwnedRun & { status: RunStatus }) | null): Promise<UnansweredLegFate> {
    return unansweredLegFate(run, !!run && (await this.runningOrphan(run)));
  }

  /**
   * Another worker's lease lapsed (SPEC §17): its indexed legs are rebuilt now (lapsedLegFate). A
   * worker never judges itself so: its own lapse is its heartbeat's to handle.
   */
  async lapsed(owner: string): Promise<boolean> {
    if (this.local && owner === this.local.workerId) return false;
    return !(await this.presence.isAlive(owner));
  }

  /** A replay-safe run executing a leg whose worker is gone: any worker rebuilds it by replay now (SPEC §16). */
  async orphanToRebuild(run: (OwnedRun & { status: RunStatus }) | null): Promise<boolean> {
    return !!run?.restartSafe && (await this.runningOrphan(run));
  }
}

/** What a caller whose leg did not answer in time does (RunOwnership.unansweredFate). */
export type UnansweredLegFate =
  /** Replay-safe, its worker gone: have it rebuilt by replay, then as `owe`. */
  | 'rebuild'
  /** Replay-safe and still running (rebuilt, or slow): answer `waiting` and owe the leg's answer to the next wait. */
  | 'owe'
  /** Not replay-safe, its worker gone: nothing will answer for it; end it `run.lost` and answer `runtime_unavailable`. */
  | 'lose'
  /** Anything else: answer `runtime_unavailable`; the run is left to whoever holds it. */
  | 'fail';

/**
 * SPEC §16: the `exec` or `wait` in flight on a `restartSafe` leg answers its outcome if it ends
 * within the call's budget plus the reply grace, else `waiting` (reason `pending_tools`) with the
 * runId, so a later `wait` gets it; `run.lost` and a `runtime_unavailable` answer are left for legs
 * that are not `restartSafe`. `orphaned`: the run is running and its worker is gone.
 */
export function unansweredLegFate(run: { status: RunStatus; restartSafe: boolean } | null, orphaned: boolean): UnansweredLegFate {
  if (run?.status !== 'running') return 'fail';
  if (run.restartSafe) return orphaned ? 'rebuild' : 'owe';
  return orphaned ? 'lose' : 'fail';
}

/** What a sweep does with a run the live-run index says is due (LiveRunSweeper). */
export type StrandedRunFate =
  /** Ended, parked (the parked-run index has it) or gone: nothing to do, the member goes. */
  | 'forget'
  /** Still `requested` past its answer's deadline: no worker started it and the API that asked did not close it. */
  | 'abandon'
  /** Running under an owner that is gone (or a worker that no longer holds it), not replay-safe: nothing will end it. */
  | 'lose'
  /** Running under an owner that is gone, replay-safe (SPEC §16): rebuilt by replay on the sweeping worker. */
  | 'replay'
  /** Running under a live owner (a long cell): looked at again after a lease. */
  | 'postpone';

/**
 * The rule for a run an exec or a wait set going whose caller's answer was due a lease ago
 * (SPEC §2 "no run is left without its terminal event"). A replay-safe run whose worker is gone
 * is rebuilt, not lost (SPEC §16: no `wait` needed): its caller may have died with its API, and
 * nothing else would notice.
 */
export function strandedRunFate(status: RunStatus | null, ownerGone: boolean, restartSafe: boolean): StrandedRunFate {
  if (status === 'requested') return 'abandon';
  if (status !== 'running') return 'forget';
  if (!ownerGone) return 'postpone';
  return restartSafe ? 'replay' : 'lose';
}

/** What the worker that found an owner's lease lapsed does with a leg of that owner's index (RunningLegIndex). */
export type LapsedLegFate =
  /** Not running under that owner any more (parked, ended, taken over, gone), or not replay-safe: the entry goes. */
  | 'forget'
  /** Running under the lapsed owner while its caller may still wait: rebuilt by replay now, answering that caller. */
  | 'rebuild'
  /** Running under the lapsed owner and its caller has answered or is gone: its answer is owed to the next wait, then rebuilt. */
  | 'rebuild-owed';

/**
 * SPEC §17 "rebuilt at once, caller or not": a `restartSafe` leg whose owner's lease lapsed is
 * rebuilt as soon as a worker notices, not when a wait or the live-run sweep does. Its answer goes
 * to the caller the leg was answering; once that caller has answered (`waiting`) or given up
 * (`answeredBy`, its budget plus the grace and a lease from the leg's start, passed), the leg's
 * answer is owed to the next wait, as the sweep owes it (SPEC §16). Before then it is not: a caller
 * that gets the pushed answer must not leave a second copy for the next wait.
 */
export function lapsedLegFate(
  run: { status: RunStatus; owner?: string | null; restartSafe: boolean } | null,
  lapsedOwner: string,
  answeredBy: number,
  now: number,
): LapsedLegFate {
  if (run?.status !== 'running' || run.owner !== lapsedOwner || !run.restartSafe) return 'forget';
  return now >= answeredBy ? 'rebuild-owed' : 'rebuild';
}

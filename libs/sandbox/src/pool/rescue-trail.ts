import type { RescueImage, RescueState } from '../engine/rescue-image';
import type { Settlement } from '../engine/types';
import { SandboxStartError } from '../errors';
import type { ToThread } from '../thread/protocol';
import type { Leg, LiveRun, MovedRun } from './live-run';

/**
 * Settlement bytes kept per run for a rescue (posted since its last rescue image); past it the run
 * is not rescued until a newer image reflects them.
 */
export const MAX_UNACKED_BYTES = 16 * 1024 ** 2;

/** Least budget a rescued leg gets (one whose budget ran out while its thread was stuck parks at once). */
export const MIN_RESCUED_LEG_MS = 100;

/**
 * SPEC §10: what the pool keeps of one run so that it can go on on another thread if its own is
 * terminated: its latest rescue image (current until the thread says `stale` or the run changes
 * its calls) and the settlements posted (numbered from 1) that no image reflects yet, up to
 * MAX_UNACKED_BYTES.
 */
export class RescueTrail {
  private latest: { image: RescueImage; state: RescueState } | undefined;
  private unacked: { seq: number; settlement: Settlement }[] = [];
  private unackedBytes = 0;
  private sent = 0;
  /** Settlements up to this number were not kept (over the bound): no rescue before an image reflects them. */
  private droppedUpTo = 0;

  /**
   * A settlement was posted to the run; `keep` when a rescue would have to apply it again (one
   * posted while other runs live on the thread, or before the thread began the leg).
   */
  posted(settlement: Settlement, keep: boolean): void {
    this.sent += 1;
    if (!keep) return;
    this.unacked.push({ seq: this.sent, settlement });
    this.unackedBytes += settlement.payload.length;
    if (this.unackedBytes <= MAX_UNACKED_BYTES) return;
    this.droppedUpTo = this.sent;
    this.unacked = [];
    this.unackedBytes = 0;
  }

  /** The thread captured the run: the settlements the image says arrived are no longer kept. */
  imaged(image: RescueImage, state: RescueState): void {
    this.latest = { image, state };
    this.unacked = this.unacked.filter((entry) => entry.seq > state.received);
    this.unackedBytes = this.unacked.reduce((bytes, entry) => bytes + entry.settlement.payload.length, 0);
  }

  /** The run's calls changed (or its guest code runs again): its image no longer holds. */
  stale(): void {
    this.latest = undefined;
  }

  /** A current image that reflects every settlement not kept. */
  get current(): boolean {
    return this.latest !== undefined && this.latest.state.received >= this.droppedUpTo;
  }

  /** The settlements kept, in the order they were posted. */
  kept(): Settlement[] {
    return this.unacked.map((entry) => entry.settlement);
  }

  /** The latest image, and the settlements posted after it. */
  image(): { image: RescueImage; state: RescueState; later: Settlement[] } | undefined {
    if (!this.latest) return undefined;
    const { received } = this.latest.state;
    return { ...this.latest, later: this.unacked.filter((entry) => entry.seq > received).map((entry) => entry.settlement) };
  }
}

/** A new cell or restore never begun starts again; otherwise a current rescue image that reflects every settlement not kept. */
export function rescuable(run: LiveRun, leg: Leg): boolean {
  if (run.starting && leg.start.type !== 'resume') return true;
  return run.rescue.current;
}

/** What the adopting thread is sent for a moved run (its slot is set there). */
export function rescueMessage({ run, leg, begun }: MovedRun): Extract<ToThread, { type: 'run' | 'restore' | 'rescue' }> {
  const start = leg.start;
  if (!begun && start.type === 'run') return start;
  // A restore or rescue never begun starts again with the settlements posted behind it, which the
  // terminated thread never read (a run moved twice would otherwise wait for them forever).
  if (!begun && (start.type === 'restore' || start.type === 'rescue')) {
    const behind = run.rescue.kept();
    if (behind.length === 0) return start;
    return start.type === 'restore'
      ? { ...start, plan: { ...start.plan, answers: [...start.plan.answers, ...behind] } }
      : { ...start, plan: { ...start.plan, answers: [...start.plan.answers, ...behind] } };
  }
  const rescue = run.rescue.image();
  if (!rescue) throw new SandboxStartError(`run ${run.runId} has no rescue image`);
  const { state, later } = rescue;
  // A begun leg goes on with what was left of its budget; a resume that never began gets all of it.
  const left = state.remainingMs - (Date.now() - state.capturedAt);
  const timeoutMs = !begun || leg.awaitResults ? leg.timeoutMs : Math.max(MIN_RESCUED_LEG_MS, left);
  const request = { ...run.request, awaitResults: leg.awaitResults, limits: { ...run.request.limits, timeoutMs } };
  const carried = begun ? { leg: { output: state.output, ...(state.journal ? { journal: state.journal } : {}) } } : {};
  return { type: 'rescue', request, slot: 0, image: rescue.image, plan: { answers: [...state.inbox, ...later], ...carried } };
}

import type { RescueImage, RescueState } from '../engine/rescue-image';
import type { Settlement } from '../engine/types';

/**
 * Settlement bytes kept per run for a rescue (posted since its last rescue image); past it the run
 * is not rescued until a newer image reflects them.
 */
export const MAX_UNACKED_BYTES = 16 * 1024 ** 2;

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

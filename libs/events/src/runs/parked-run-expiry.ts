import type { EndingRun, RunEnds } from './run-ends';
import { pastExpiry } from './parking-term';
import type { RunOwnership } from './run-ownership';

/** Who looks at a parked run's expiry: its holder's timer, a wait that reserved it, or a worker's sweep (ParkedRunSweeper). */
export type ExpiryAsker = 'holder' | 'wait' | 'sweep';

/** What the expiry rule says about a parked run (expiryStep). */
export type ExpiryStep =
  /** Before its term (parkingTerm): nobody ends it. */
  | 'not-due'
  /** Due, and its holder is alive: its timer ends it (and disposes its VM); a sweep looks again later. */
  | 'left-to-holder'
  /** Due, and the one asking ends it now. */
  | 'end';

/** A parked run as whoever asks sees it: `expiresAt` as recorded (ISO) or held (epoch ms). */
export type ExpiringRun = EndingRun & { owner: string | null; expiresAt: string | number | null };

/**
 * The one rule for ending a parked run past its term (SPEC §3 `snapshotTtlSeconds`): nobody
 * before it; after it, its holder by its timer, or whoever finds it first when the holder is gone.
 * A wait that finds it due ends it even under a live holder: it must answer now, and the holder's
 * timer is only late. Every end is `RunEnds.expire`, fenced by the epoch the asker saw, so two
 * that find it due at once end it once.
 */
export function expiryStep(due: boolean, asker: ExpiryAsker, holderGone: boolean): ExpiryStep {
  if (!due) return 'not-due';
  if (asker === 'sweep' && !holderGone) return 'left-to-holder';
  return 'end';
}

/**
 * The one actor that ends parked runs past their term: the holder's timer, a wait and the sweep
 * each ask it with what they see, and it ends the run when expiryStep says so. Whether the holder
 * is gone is RunOwnership's (asked only by a sweep: the others are, or act for, the caller).
 */
export class ParkedRunExpiry {
  constructor(
    private readonly ends: Pick<RunEnds, 'expire'>,
    private readonly ownership?: Pick<RunOwnership, 'ownerGone'>,
  ) {}

  /** `ended`: this call wrote `run.expired` (false when the rule says wait, or the run moved on or ended meanwhile). */
  async settle(run: ExpiringRun, asker: ExpiryAsker, now = Date.now()): Promise<{ step: ExpiryStep; ended: boolean }> {
    const due = pastExpiry(run.expiresAt, now);
    const holderGone = due && asker === 'sweep' && this.ownership ? await this.ownership.ownerGone(run) : false;
    const step = expiryStep(due, asker, holderGone);
    return { step, ended: step === 'end' && (await this.ends.expire(run)) };
  }
}

import type { CellSpec, Limits, SessionRef } from '@codemode/contracts';
import { pastExpiry } from '@codemode/events';
import type { RunToolHost } from '../tools/run-tool-host';
import type { ClaimGate } from './claim-gate';
import type { EntryAck } from './entry-ack';

/**
 * Where a run is on this worker. One run, one residency, one table of moves (`nextResidency`):
 *
 *   running ──park──▶ parked ──take──▶ resuming ──resume──▶ running
 *      ▲                │  ▲──giveBack───┘                    │
 *      begin            │  └─park (parked again, same VM)     │
 *                       └──handOver──▶ handingOver ──leave──▶ gone
 *   any but gone ──end──▶ gone      any but gone ──drop──▶ gone
 *
 * - `running`: a leg of it executes here (first, resume, restore, replay or rerun).
 * - `parked`: its VM waits in the pool for a wait; it may expire, be handed over or evicted.
 * - `resuming`: a wait's job took it out of the parked set; the take in Redis is on its way. It
 *   cannot expire, be handed over or evicted under the take.
 * - `handingOver`: it leaves this worker while its release is written (shutdown, eviction,
 *   thread death with an image, always-replay); the next wait restores or replays it elsewhere.
 * - `gone`: not on this worker any more: it ended (`end`: its terminal event), or it left memory
 *   without ending (`drop`: another worker took it, or its outcome could not be recorded).
 */
export type Residency = 'running' | 'parked' | 'resuming' | 'handingOver' | 'gone';

export type ResidencyMove = 'park' | 'take' | 'giveBack' | 'resume' | 'handOver' | 'leave' | 'end' | 'drop';

const MOVES: Record<Residency, Partial<Record<ResidencyMove, Residency>>> = {
  running: { park: 'parked', end: 'gone', drop: 'gone' },
  // A park recorded again (its first write's reply was lost) parks the same VM again.
  parked: { park: 'parked', take: 'resuming', handOver: 'handingOver', end: 'gone', drop: 'gone' },
  resuming: { giveBack: 'parked', resume: 'running', end: 'gone', drop: 'gone' },
  handingOver: { leave: 'gone', end: 'gone', drop: 'gone' },
  gone: {},
};

/** A move the residency table does not allow: a bug in the caller, never a run's fault. */
export class ResidencyError extends Error {
  constructor(runId: string, from: Residency, move: ResidencyMove) {
    super(`run ${runId} cannot ${move} while ${from}`);
  }
}

/** The residency a move leads to; throws ResidencyError for a move the table does not allow. */
export function nextResidency(runId: string, from: Residency, move: ResidencyMove): Residency {
  const to = MOVES[from][move];
  if (to === undefined) throw new ResidencyError(runId, from, move);
  return to;
}

/**
 * One run on this worker: its identity, its whole spec, its tool host (catalog, buffered store
 * writes and counters live across waits), what it holds (a parked-run quota place, an image in
 * Redis) and where it is (`residency`). Every part of the worker that handles a run handles this.
 */
export class WorkerRun {
  residency: Residency = 'running';
  /** Its legs on this worker so far: a resume starts the next (`WorkerRuns.move`), which makes an earlier leg's park sent again stale. */
  leg = 1;
  /** An abort reached it while a resume was taking it: that resume's leg ends aborted without running. */
  abortRequested = false;
  /** Output bytes already returned by earlier calls of this run (SPEC: shared across waits). */
  priorOutputBytes: number;
  /** When it last parked (epoch ms), and when that park lapses; 0 until it parks (its ParkingTerm). */
  parkedAt = 0;
  expiresAt = 0;
  /** It holds a place in its tenant's parked-run quota (SPEC §10), given back when the run ends. */
  holdsParkedQuota: boolean;
  /** Its image is in Redis (SPEC §12): it can be handed over or evicted instead of lost. */
  imaged = false;
  /** Its image's size: what it counts against its tenant's parked bytes once its VM left memory (SPEC §10). */
  imageBytes = 0;
  /** The acknowledgement of the stream entry that brought its new cell (SPEC §13), sent beside its first recorded outcome. */
  readonly entryAck: EntryAck | undefined;
  /** A new cell started before its claim was written: when it is claimed (SPEC §13). */
  readonly claimGate: ClaimGate | undefined;

  constructor(
    readonly ref: SessionRef,
    readonly runId: string,
    readonly epoch: number,
    readonly spec: CellSpec,
    readonly host: RunToolHost,
    held: { priorOutputBytes?: number; holdsParkedQuota?: boolean; entryAck?: EntryAck; claimGate?: ClaimGate } = {},
  ) {
    this.priorOutputBytes = held.priorOutputBytes ?? 0;
    this.holdsParkedQuota = held.holdsParkedQuota ?? false;
    this.entryAck = held.entryAck;
    this.claimGate = held.claimGate;
  }

  get limits(): Limits {
    return this.spec.limits;
  }

  get restartSafe(): boolean {
    return this.spec.restartSafe;
  }

  get awaitResults(): boolean {
    return this.spec.awaitResults;
  }

  /** Log fields naming the run. */
  get fields(): { tenant: string; sessionId: string; runId: string } {
    return { tenant: this.ref.tenant, sessionId: this.ref.sessionId, runId: this.runId };
  }
}

/**
 * The runs on this worker, by id, each in its residency, with ONE timer armed for the earliest
 * expiry of the parked ones (not one per run). Every change of a run's residency goes through
 * `move`, checked against the table above; a run that moves to `gone` leaves the index.
 */
export class WorkerRuns {
  private readonly runs = new Map<string, WorkerRun>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;

  constructor(
    private readonly onExpire: (run: WorkerRun) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A leg of the run starts here. A run of the same id still indexed is of an older epoch (this
   * worker kept it after it was released or taken over): it is the caller's to drop first.
   */
  begin(run: WorkerRun): void {
    const here = this.runs.get(run.runId);
    if (here && here !== run) throw new Error(`run ${run.runId} is already on this worker (${here.residency})`);
    run.residency = 'running';
    this.runs.set(run.runId, run);
  }

  /** Moves the run (checked against the residency table); a `park` arms the expiry timer for `run.expiresAt`. */
  move(run: WorkerRun, move: ResidencyMove): void {
    run.residency = nextResidency(run.runId, run.residency, move);
    if (move === 'resume') {
      // Its next leg: the image in Redis is an earlier park's, so its VM may not leave for it
      // (evicted, handed over) until this leg's own park is recorded.
      run.leg += 1;
      run.imaged = false;
    }
    if (run.residency === 'gone') {
      if (this.runs.get(run.runId) === run) this.runs.delete(run.runId);
      return;
    }
    // Parked (again, or given back by a resume not taken): its expiry applies from now.
    if (run.residency === 'parked' && run.expiresAt < this.armedFor) this.arm();
  }

  get(runId: string): WorkerRun | undefined {
    return this.runs.get(runId);
  }

  /** The run when it is parked here: not running a leg, not being resumed, not leaving. */
  parked(runId: string): WorkerRun | undefined {
    const run = this.runs.get(runId);
    return run?.residency === 'parked' ? run : undefined;
  }

  all(): WorkerRun[] {
    return [...this.runs.values()];
  }

  get size(): number {
    return this.runs.size;
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
  }

  private arm(): void {
    this.close();
    let earliest = Infinity;
    for (const run of this.runs.values()) if (run.residency === 'parked') earliest = Math.min(earliest, run.expiresAt);
    if (earliest === Infinity) return;
    this.armedFor = earliest;
    this.timer = setTimeout(() => this.expireDue(), Math.max(0, earliest - this.now()));
    this.timer.unref();
  }

  /** Parked runs past their expiry end (`end`) and are handed to `onExpire`; a run being resumed does not expire. */
  private expireDue(): void {
    const now = this.now();
    for (const run of [...this.runs.values()]) {
      if (run.residency === 'parked' && pastExpiry(run.expiresAt, now)) {
        this.move(run, 'end');
        this.onExpire(run);
      }
    }
    this.arm();
  }
}

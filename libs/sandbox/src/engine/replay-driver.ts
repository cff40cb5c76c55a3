import type { ReplayPlan } from '@codemode/contracts';
import { replayDivergedMessage, type CellOutcome } from '@codemode/cells';
import { BridgeProtocolError } from '../errors';
import { methodOf, sameCall, sameIds } from './bridge-args';
import type { BridgeLedger } from './bridge-ledger';
import type { CellVm } from './cell-vm';
import type { Failure } from './guest-error';
import type { Settlement } from './types';

/** The run a replay rebuilds: how its recorded legs start and run, and whether it was aborted. */
export interface ReplayedRun {
  /** Leg 1 runs the cell; an outcome when it ended instead of parking. */
  startCell(): CellOutcome | undefined;
  /** Later legs start by releasing their yields; an outcome when that ended the run. */
  releaseYields(): CellOutcome | undefined;
  /** Runs the VM's jobs; true when it went idle. */
  pump(): boolean;
  abortedNow(): boolean;
}

/** Why a rebuild stopped before the live leg: the run fails with it. */
export type ReplayStop = 'aborted' | 'timeout' | 'diverged';

/**
 * Rebuilds a run from its log (SPEC §6) and answers for the log while it goes on live: the
 * recorded legs are re-run against their journals, clock reads come from the record, calls the
 * log saw settle are answered from it, and open timers keep their recorded due times. The first
 * difference from the log is the divergence the run fails with.
 */
export class ReplayDriver {
  /** While recorded legs are re-run: the calls the current one recorded, and how many were made. */
  private replaying: { calls: [string, string][]; made: number } | undefined;
  /** The first difference between the replay and the log; the run fails with it. */
  private divergence: string | undefined;
  private recordedClock: readonly number[] = [];
  private clockReads = 0;
  /** After a replay: open timers to re-arm for what is left until their recorded due time. */
  private readonly rearm = new Map<string, number>();

  constructor(
    private readonly vm: CellVm,
    private readonly ledger: BridgeLedger,
    private readonly plan: ReplayPlan | undefined,
  ) {}

  /** Recorded legs are being re-run: nothing is dispatched and output is dropped. */
  get active(): boolean {
    return this.replaying !== undefined;
  }

  get diverged(): boolean {
    return this.divergence !== undefined;
  }

  /** The run's failure once it diverged; halts the VM. */
  failure(): Failure {
    this.vm.halt();
    return { code: 'internal_error', phase: 'host', error: replayDivergedMessage(this.divergence ?? 'unknown difference') };
  }

  /**
   * Re-runs the recorded legs (SPEC §6): each starts as its live leg did (the cell, or released
   * yields), then applies the leg's settlements in their order, each followed by a pump. Calls are
   * not dispatched; each must match the record, and each leg must end parked on yields as it did.
   */
  rebuild(plan: ReplayPlan, run: ReplayedRun): ReplayStop | undefined {
    this.recordedClock = plan.clock;
    for (const [index, leg] of plan.legs.entries()) {
      const legName = `leg ${index + 1}`;
      this.replaying = { calls: leg.calls, made: 0 };
      const early = index === 0 ? run.startCell() : run.releaseYields();
      if (early) return this.divergeNow(`${legName} ended (${early.status}) where the run had parked`);
      if (!this.pump(run)) return this.stopped(run);
      for (const [id, ok, payload] of leg.settled) {
        if (this.divergence) break;
        if (!this.ledger.close(id)) return this.divergeNow(`the log settles ${id} in ${legName}, a call the replay has not made`);
        if (this.vm.settle(id, ok, payload)) return this.divergeNow(`settling ${id} in ${legName} threw where the recorded run went on`);
        if (!this.pump(run)) return this.stopped(run);
      }
      if (this.divergence) return 'diverged';
      if (this.replaying.made < leg.calls.length) {
        return this.divergeNow(`${legName} made ${this.replaying.made} of its ${leg.calls.length} recorded calls`);
      }
      const openAsRecorded = leg.open ? sameIds(this.ledger.openIds(), leg.open) : this.ledger.onlyYields();
      if (this.vm.promiseState() !== 'pending' || !openAsRecorded) {
        return this.divergeNow(`${legName} did not end with the calls open that the recorded run parked with`);
      }
    }
    this.replaying = undefined;
    if (this.clockReads < this.recordedClock.length) {
      return this.divergeNow(`the replay read the clock ${this.clockReads} times, the recorded run ${this.recordedClock.length}`);
    }
    return undefined;
  }

  /**
   * Calls still open when the run last parked were running on the worker that is gone: those the
   * log saw settle are answered from it (returned, in request order), the others are made again
   * (replay-safe surfaces only) through the bridge queue. A timer keeps its due time: it fires
   * when it would have on the worker that is gone.
   */
  answerOpenCalls(plan: ReplayPlan): Settlement[] {
    const dueTimes = new Map(plan.legs.flatMap((leg) => leg.timers ?? []));
    const answered: Settlement[] = [];
    for (const [id, method] of this.ledger.openCalls()) {
      if (method === 'yield') continue;
      const recorded = plan.tail[id];
      if (recorded) {
        this.ledger.answer(id);
        answered.push({ id, ok: recorded.ok, payload: recorded.payload });
        continue;
      }
      const due = method === 'sleep' ? dueTimes.get(id) : undefined;
      if (due !== undefined) this.rearm.set(id, due);
    }
    return answered;
  }

  /**
   * A `callValue` of the live leg that was made before the worker died and settled in the log:
   * its recorded outcome (the call is answered), not a second call.
   */
  answerFromLog(id: string, argsJson: string): Settlement | undefined {
    const recorded = this.plan?.tail[id];
    if (!recorded) return undefined;
    if (!sameCall(argsJson, recorded.tool, recorded.inputJson))
      return this.divergeInCall(`${id} calls a tool or input other than the log records (${recorded.tool})`);
    this.ledger.answer(id);
    return { id, ok: recorded.ok, payload: recorded.payload };
  }

  /** A call the replay made: it must be the leg's next recorded call, with the same arguments. */
  checkCall(id: string, argsJson: string): void {
    const replaying = this.replaying;
    if (!replaying) return;
    const recorded = replaying.calls[replaying.made];
    if (!recorded) return this.divergeInCall(`the replay called ${id} beyond the calls recorded for its leg`);
    if (recorded[0] !== id || recorded[1] !== argsJson)
      return this.divergeInCall(`the replay called ${id} where the log records ${recorded[0]} with other arguments`);
    replaying.made += 1;
  }

  /** The replay's next clock read, from the record. */
  clock(): number {
    const recorded = this.recordedClock[this.clockReads];
    if (recorded === undefined)
      return this.divergeInCall(`the replay read the clock more often than the recorded run (${this.recordedClock.length} times)`);
    this.clockReads += 1;
    return recorded;
  }

  /** A re-armed timer's recorded due time (epoch ms), once. */
  takeRearm(id: string): number | undefined {
    const due = this.rearm.get(id);
    this.rearm.delete(id);
    return due;
  }

  /** Runs the replay's jobs to idle; false when it stopped (budget, abort, divergence). */
  private pump(run: ReplayedRun): boolean {
    if (run.abortedNow() || this.divergence) return false;
    const idle = run.pump();
    return idle && !this.vm.timedOut && !run.abortedNow() && !this.divergence;
  }

  private stopped(run: ReplayedRun): ReplayStop {
    if (run.abortedNow()) return 'aborted';
    if (this.divergence) return 'diverged';
    return 'timeout';
  }

  private divergeNow(detail: string): ReplayStop {
    this.divergence ??= detail;
    return 'diverged';
  }

  /** Records a divergence found inside a host call and stops the guest (it cannot catch it). */
  private divergeInCall(detail: string): never {
    this.divergence ??= detail;
    this.vm.halt();
    throw new BridgeProtocolError(replayDivergedMessage(this.divergence));
  }
}

/** Whether the recorded run dispatched anything (a `bridgeDispatchStarted` that carries over). */
export function dispatchedBefore(plan: ReplayPlan): boolean {
  return plan.legs.some((leg) => leg.calls.some(([id]) => methodOf(id) !== 'yield')) || Object.keys(plan.tail).length > 0;
}

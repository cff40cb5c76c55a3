import { jsonNestsDeeperThan, VALUE_TOO_DEEP_ERROR } from '@codemode/contracts';
import { ABORTED_MESSAGE, STACK_OVERFLOW_TEXT, TIMEOUT_MESSAGE, type CellOutcome, type WaitingOutcome } from '@codemode/cells';
import type { SandboxEngineError } from '../errors';
import type { CellVm } from './cell-vm';
import { classifyGuestError, type Failure, type GuestErrorRecord } from './guest-error';
import type { LegOutput } from './leg-output';
import type { LegRecorder } from './leg-recorder';
import type { RestartSafety } from './restart-safety';

/** What a park adds to the outcome (the rest every outcome carries). */
export type Parked = Pick<WaitingOutcome, 'reason' | 'pending' | 'snapshotBytes' | 'memoryBytes' | 'image'>;

/**
 * The outcomes a run's legs end with. Each carries what the leg printed since the last outcome
 * (handed out once), its journal and whether the run ever dispatched a call, so no ending can
 * forget one of them; and the failures the host decides (timeout, abort, a refused call of a
 * restartSafe cell, an engine failure) are worded in one place.
 */
export class LegOutcomes {
  constructor(
    private readonly vm: CellVm,
    private readonly printed: LegOutput,
    private readonly recorder: LegRecorder,
    private readonly safety: RestartSafety,
    private readonly dispatched: () => boolean,
  ) {}

  /**
   * The cell's promise fulfilled with no call outstanding: its value, read and serialized in the
   * guest, unless an unhandled rejection, a refused call, the deadline or the depth bound fails it.
   */
  completed(): CellOutcome {
    const unhandled = this.vm.readUnhandledRejection();
    if (this.vm.timedOut) return this.timeout();
    if (unhandled) return this.guest(unhandled);
    const value = this.vm.readValue();
    if (this.safety.refused) return this.refused();
    if (this.vm.timedOut) return this.timeout();
    if (!value.ok) return this.guest(value.record);
    // SPEC §10 "Depth": checked on the guest's JSON text, so no reader of the result ever recurses past the bound.
    if (jsonNestsDeeperThan(value.json)) return this.fail({ code: 'invalid_input', phase: 'guest', error: VALUE_TOO_DEEP_ERROR });
    return { status: 'completed', valueJson: value.json, ...this.common() };
  }

  waiting(parked: Parked): CellOutcome {
    return { status: 'waiting', ...parked, ...this.common() };
  }

  fail(failure: Failure): CellOutcome {
    return { status: 'failed', ...failure, ...this.common() };
  }

  guest(record: GuestErrorRecord): CellOutcome {
    return this.fail(classifyGuestError(record));
  }

  timeout(): CellOutcome {
    return this.fail({ code: 'timeout', phase: 'guest', error: TIMEOUT_MESSAGE });
  }

  aborted(): CellOutcome {
    return this.fail({ code: 'aborted', phase: 'host', error: ABORTED_MESSAGE });
  }

  /** SPEC §5: the restartSafe cell made a call it may not (phase by whether anything was dispatched before). */
  refused(): CellOutcome {
    return this.fail(this.safety.failure(this.dispatched()));
  }

  /** Guest code threw out of a host-driven call (a settlement, a timer callback). */
  afterThrow(thrown: GuestErrorRecord): CellOutcome {
    if (this.safety.refused) return this.refused();
    return this.vm.timedOut ? this.timeout() : this.guest(thrown);
  }

  /** The engine itself failed: out of memory, a host stack overflow, or anything else it threw. */
  engineFailure(error: SandboxEngineError): CellOutcome {
    return this.fail({ code: 'internal_error', phase: 'guest', error: this.engineFailureText(error) });
  }

  /** This leg's output (handed out once) and the run-wide flags. */
  private common() {
    const journal = this.recorder.journal;
    return {
      output: this.printed.take(),
      consoleTruncated: this.printed.consoleTruncated,
      bridgeDispatchStarted: this.dispatched(),
      ...(journal ? { journal } : {}),
    };
  }

  private engineFailureText(error: SandboxEngineError): string {
    if (this.vm.memoryFull) return 'InternalError: out of memory';
    if (/Maximum call stack size exceeded/.test(error.message)) return STACK_OVERFLOW_TEXT;
    return `InternalError: sandbox engine failure (${error.message})`;
  }
}

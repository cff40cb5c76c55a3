import type { RunLedger } from '@codemode/events';

/** What a claim of a new cell's run answers (`RunLedger.start`): started, or the run's status. */
export type ClaimAnswer = Awaited<ReturnType<RunLedger['start']>>;

/** How long a new cell may run before its claim is written (SPEC §13: at most 100 ms). */
export const CLAIM_WITHIN_MS = 100;

/**
 * How long a cell of this budget runs before its claim is written: 100 ms, or a quarter of a
 * shorter budget. The API abandons a run nobody claimed within the cell's budget (`timeoutMs`,
 * from 100 ms): a cell of a short budget is claimed well before that, as it was before it could
 * start unclaimed.
 */
export function claimWithinMs(timeoutMs: number): number {
  return Math.min(CLAIM_WITHIN_MS, Math.floor(timeoutMs / 4));
}

/** The error a request gets when its run's claim was declined (the run is stopped: nobody sees it). */
export class ClaimDeclinedError extends Error {
  constructor(readonly status: string | null) {
    super('code mode run is no longer waiting for this worker; the cell is stopped.');
  }
}

/**
 * When a new cell's run is claimed (SPEC §13). The cell starts before its claim is written; the
 * claim goes out at its first bridge request, at `CLAIM_WITHIN_MS`, or before it parks, whichever
 * comes first, and every request waits for it. A cell that ends before any of these is claimed by
 * its end (`forEnd` answers `fused`: finish-run claims and ends it in one script), and once that
 * is decided no claim is sent any more. A declined claim stops the run (`declined`): its cell
 * made no request, so nothing of it is seen anywhere.
 *
 *   unclaimed ──request / timer / park──▶ claiming ──▶ claimed | declined (stopped)
 *       └──────────end──────────▶ fused
 */
export class ClaimGate {
  private claim: Promise<ClaimAnswer> | undefined;
  private answer: ClaimAnswer | undefined;
  private fused = false;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param claimRun writes the claim (start-run.lua, retried while Redis does not answer)
   * @param declined called once when the claim was declined or failed: stops the cell
   */
  constructor(
    private readonly claimRun: () => Promise<ClaimAnswer>,
    private readonly declined: () => void,
    private readonly withinMs = CLAIM_WITHIN_MS,
  ) {}

  /** The cell is handed to the sandbox: its claim goes out at `withinMs` unless something came first. */
  arm(): void {
    if (this.claim || this.fused) return;
    this.timer = setTimeout(() => void this.claimed().catch(() => undefined), this.withinMs);
    this.timer.unref();
  }

  /** Before a bridge request: undefined once claimed; else the claim, which rejects when it was declined or failed. */
  beforeRequest(): Promise<void> | undefined {
    if (this.answer?.started) return undefined;
    return this.claimed().then((answer) => {
      if (!answer.started) throw new ClaimDeclinedError(answer.status);
    });
  }

  /** Claims the run, once (every caller shares the one claim), and answers what the claim did. */
  claimed(): Promise<ClaimAnswer> {
    if (this.fused) return Promise.reject(new Error('the run is claimed by its end'));
    clearTimeout(this.timer);
    this.claim ??= this.claimRun().then(
      (answer) => {
        this.answer = answer;
        if (!answer.started) this.declined();
        return answer;
      },
      (error: unknown) => {
        this.declined();
        throw error;
      },
    );
    return this.claim;
  }

  /**
   * At the run's first recorded end: `fused` when no claim was sent (the end claims it, and none
   * is sent from now on), else what the claim answered (it rejects when the claim failed).
   */
  forEnd(): Promise<'fused' | ClaimAnswer> {
    clearTimeout(this.timer);
    if (this.claim) return this.claim;
    this.fused = true;
    return Promise.resolve('fused');
  }
}

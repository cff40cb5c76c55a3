import type { CodeModeResult } from '@codemode/contracts';

/** The reason the deadline's signal aborts with once answered: made once, since `abort()` with none builds a DOMException (and its stack) per call. */
const SETTLED = new Error('the call was answered');

/**
 * Waits for a run's pushed answer under two deadlines: the run must start within its budget
 * (else `onStartOverdue` decides), and once started it must answer within its budget plus a grace.
 */
export class ReplyDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private armedAt = 0;
  private settled = false;
  private resolveOutcome!: (result: CodeModeResult) => void;
  private rejectOutcome!: (error: unknown) => void;
  readonly outcome: Promise<CodeModeResult>;

  constructor(
    /** How long the run may wait for a worker to take it. */
    private readonly startBudgetMs: number,
    /** How long a taken run may take to answer (its budget; longer for awaitResults). */
    private readonly answerBudgetMs: number,
    private readonly graceMs: number,
    private readonly handlers: {
      /** Resolves an answer to give now, or null to keep waiting for the reply. */
      onStartOverdue: () => Promise<CodeModeResult | null>;
      /** Called when a started run did not answer in time. */
      onNoAnswer: () => Promise<CodeModeResult>;
      /**
       * SPEC §11: true while the run's budget clock may have been stopped since `sinceMs` (a call
       * waits for an approval, or got its decision since): the deadline is then counted again.
       */
      heldForApproval?: (sinceMs: number) => Promise<boolean>;
    },
  ) {
    this.outcome = new Promise<CodeModeResult>((resolve, reject) => {
      this.resolveOutcome = resolve;
      this.rejectOutcome = reject;
    });
    this.timer = setTimeout(() => this.startOverdue(), startBudgetMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The worker claimed the run: its own budget starts now. */
  started(): void {
    if (this.settled) return;
    clearTimeout(this.timer);
    this.armedAt = Date.now();
    this.timer = setTimeout(() => this.noAnswer(), this.answerBudgetMs + this.graceMs);
  }

  /** Settles with the answer the worker pushes; its rejection once the deadline settled is ignored. */
  listen(answer: Promise<CodeModeResult>): void {
    answer.then(
      (result) => this.resolve(result),
      (error: unknown) => {
        if (!this.controller.signal.aborted) this.reject(error);
      },
    );
  }

  resolve(result: CodeModeResult): void {
    this.finish(() => this.resolveOutcome(result));
  }

  reject(error: unknown): void {
    this.finish(() => this.rejectOutcome(error));
  }

  /**
   * The leg was never set going (its request created no run, or failed before it could): stops
   * listening and timing. Its outcome never settles; nobody awaits it.
   */
  drop(): void {
    this.finish(() => undefined);
  }

  private finish(settle: () => void): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.controller.abort(SETTLED);
    settle();
  }

  private startOverdue(): void {
    this.handlers.onStartOverdue().then(
      (answer) => {
        if (answer) this.resolve(answer);
        else this.started();
      },
      (error: unknown) => this.reject(error),
    );
  }

  private noAnswer(): void {
    const held = this.handlers.heldForApproval?.(this.armedAt) ?? Promise.resolve(false);
    held
      .then((again) => {
        if (again) this.started();
        else this.giveUp();
      })
      .catch((error: unknown) => this.reject(error));
  }

  private giveUp(): void {
    this.handlers.onNoAnswer().then(
      (answer) => this.resolve(answer),
      (error: unknown) => this.reject(error),
    );
  }
}

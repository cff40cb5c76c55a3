import { Injectable } from '@nestjs/common';
import { awaitsOnlyPlatform, openPlatformCalls, pendingTools, type SessionRef, type WaitingResult } from '@codemode/contracts';
import { EventLog, RunLedger, termHalfSpent } from '@codemode/events';

/**
 * SPEC §18 "A wait with nothing to do answers at once": a wait on a run parked only for platform
 * calls nobody answered yet (awaitsOnlyPlatform) answers the run's `waiting` again, with the same
 * `pendingToolCalls` and without its output (returned already), recorded as one `run.waited`; the
 * VM is not resumed. The answer is conditioned on the run being as read (answer-idle-wait.lua), so
 * a platform answer or a resume that lands meanwhile sends the wait the ordinary way. A run past
 * half its term goes the ordinary way too: resumed, it parks again under a fresh term (so the
 * wait counts for its expiry), and past its term the wait ends it (ParkedRunExpiry).
 */
@Injectable()
export class IdleWaitAnswers {
  constructor(
    private readonly runs: RunLedger,
    private readonly events: EventLog,
  ) {}

  /** The answer, or null when the wait has work to do (or the run moved on): reserve and resume it. */
  async answerAtOnce(ref: SessionRef, runId: string): Promise<WaitingResult | null> {
    const { run, lastEvent } = await this.runs.readIdleWait(ref, runId);
    // Past half its term the wait resumes the run, which parks it under a fresh term (termHalfSpent).
    if (run?.status !== 'waiting' || !lastEvent || termHalfSpent(run.parkedAt, run.expiresAt)) return null;
    const last = run.lastResult;
    // Only a run waiting for pending tools can wait only for the platform: the log is read for those alone.
    if (last?.status !== 'waiting' || pendingTools(last).length === 0) return null;
    const open = openPlatformCalls(await this.events.runEvents(ref, runId, Date.parse(run.createdAt)));
    if (!awaitsOnlyPlatform(last, open)) return null;
    const { output: _returned, ...result } = last;
    const answered = await this.runs.answerIdleWait(ref, { runId, lastEvent }, { input: { runId }, result });
    return answered ? result : null;
  }
}

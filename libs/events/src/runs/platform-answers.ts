import { openPlatformCalls, platformSettledData, type RunView, type SessionRef, type ToolResult } from '@codemode/contracts';
import type { EventLog } from '../log/event-log';
import { recordsPlatformAnswer } from './platform-calls';

/** Why answers were not recorded: the first id that is not an unsettled platform call. */
export class NotAwaitingPlatformError extends Error {
  constructor(readonly callId: string) {
    super(`tool call ${callId} is not waiting for the platform's answer.`);
    this.name = 'NotAwaitingPlatformError';
  }
}

/**
 * Records platform answers (`POST …/tool-results`) of a replay-safe parked run that no worker
 * holds in memory (released for replay): its next wait rebuilds it and takes them from the log.
 * Each answer must be for an unsettled call the log marks as answered only by the platform, as
 * the owner would check it; an answer the log already records for its call, identically, is
 * accepted without a second append. Appends are fenced by the run's epoch.
 * @throws NotAwaitingPlatformError; RunAlreadyEndedError or StaleEpochError from the appends
 */
export async function recordPlatformAnswers(log: EventLog, ref: SessionRef, run: RunView, results: readonly ToolResult[]): Promise<void> {
  const events = await log.runEvents(ref, run.runId, Date.parse(run.createdAt));
  const open = openPlatformCalls(events);
  const refused = results.find((r) => !open.has(r.id) && !recordsPlatformAnswer(events, r));
  if (refused) throw new NotAwaitingPlatformError(refused.id);
  // An answer the log already has (delivered twice) is accepted, not appended again.
  for (const result of results.filter((r) => open.has(r.id))) {
    await log.append(ref, { type: 'tool.settled', runId: run.runId, epoch: run.epoch, data: platformSettledData(result, true) });
  }
}

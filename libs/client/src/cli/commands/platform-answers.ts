import {
  awaitsOnlyPlatform,
  openPlatformCalls,
  pendingTools,
  type CodeModeResult,
  type Event,
  type WaitingResult,
} from '@codemode/contracts';
import type { CodeModeClient } from '../../codemode-client';

/** The largest events page the API serves. */
const PAGE_SIZE = 1000;

/**
 * SPEC §18 "The CLI does not spin": whether a `waiting` run waits only for answers the platform
 * must post (awaitsOnlyPlatform over the run's own events), so calling `wait` again would only
 * get the same answer. Reads the log only for a run waiting for pending tools, from the run's
 * request on.
 */
export async function awaitsPlatformAnswers(client: CodeModeClient, sessionId: string, result: CodeModeResult): Promise<boolean> {
  if (result.status !== 'waiting' || pendingTools(result).length === 0) return false;
  const run = await client.getRun(sessionId, result.runId);
  const events: Event[] = [];
  let after = `${Math.max(0, Date.parse(run.createdAt) - 1)}-0`;
  for (;;) {
    const page = await client.events(sessionId, { after, limit: PAGE_SIZE });
    events.push(...page.events.filter((event) => event.runId === result.runId));
    if (page.next === null || page.events.length === 0) break;
    after = page.next;
  }
  return awaitsOnlyPlatform(result, openPlatformCalls(events));
}

/** What the user is told instead of a wait that could only answer the same: the calls, and how to answer them. */
export function renderPlatformAnswersNeeded(sessionId: string, result: WaitingResult): string {
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}/runs/${encodeURIComponent(result.runId)}/tool-results`;
  const first = pendingTools(result)[0]?.id ?? 'bridge:callValue:1';
  return (
    `run ${result.runId} waits for the platform's answers to the calls above; waiting again would answer the same.\n` +
    `Answer them with POST ${path}, e.g.\n` +
    `  {"results":[{"id":"${first}","ok":true,"value":<the tool's answer>}]}\n` +
    `  ({"id":…,"ok":false,"error":"<message>"} for a failure), then resume with: codemode wait ${result.runId} -s ${sessionId}\n`
  );
}

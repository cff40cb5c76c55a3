import { decodeEventData } from './event-data';
import type { EventType } from './events';
import type { CodeModeResult, PendingToolCall } from './result';

/**
 * The platform calls a run's log leaves open: called as answered only by the platform
 * (`tool.called` with `answeredBy: 'platform'`) and not settled (`tool.settled`). `events` are the
 * run's own; an event whose data does not decode counts as neither.
 */
export function openPlatformCalls(events: readonly { type: EventType; data: unknown }[]): Set<string> {
  const called = new Set<string>();
  const settled = new Set<string>();
  for (const event of events) {
    if (event.type === 'tool.called') {
      const data = decodeEventData(event.type, event.data);
      if (data?.answeredBy === 'platform') called.add(data.callId);
    } else if (event.type === 'tool.settled') {
      const data = decodeEventData(event.type, event.data);
      if (data) settled.add(data.callId);
    }
  }
  return new Set([...called].filter((callId) => !settled.has(callId)));
}

/**
 * SPEC §18 "A wait with nothing to do answers at once": the run's last answer is `waiting` for
 * pending tools and every call it lists is a platform call still open in the log (`open`, from
 * openPlatformCalls), so only a `POST …/tool-results` can move it: resuming its VM would only
 * park it again. Anything else pending — an answered call, a timer, a yield, a call held for an
 * approval (SPEC §11: the next wait pauses for the decision) or queued behind a slot (none of
 * these has an open platform `tool.called`) — is work for the wait. The API answers such a wait
 * without resuming the run; the CLI tells its user to post the answers instead of waiting.
 */
export function awaitsOnlyPlatform(result: CodeModeResult | null | undefined, open: ReadonlySet<string>): boolean {
  const pending = pendingTools(result);
  return pending.length > 0 && pending.every((call) => open.has(call.id));
}

/** The calls a `waiting` answer for pending tools lists (none for any other answer): what awaitsOnlyPlatform looks up. */
export function pendingTools(result: CodeModeResult | null | undefined): PendingToolCall[] {
  return result?.status === 'waiting' && result.reason === 'pending_tools' ? (result.pendingToolCalls ?? []) : [];
}

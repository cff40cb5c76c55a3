import { isDeepStrictEqual } from 'node:util';
import { decodeEventData, platformSettledData, type EventType, type ToolResult } from '@codemode/contracts';

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
 * Whether the log already records `answer` as the platform's answer to its call: a `tool.settled`
 * of that call with the data this answer is recorded as. Such an answer delivered again (the
 * `tool-results` job a dead owner had taken and recorded, then withdrawn and recorded by the API)
 * is already in the log, not a refusal.
 */
export function recordsPlatformAnswer(events: readonly { type: EventType; data: unknown }[], answer: ToolResult): boolean {
  const wanted = asJson(platformSettledData(answer, true));
  return events.some(
    (event) =>
      event.type === 'tool.settled' &&
      (event.data as { callId?: unknown }).callId === answer.id &&
      isDeepStrictEqual(asJson(event.data), wanted),
  );
}

/** The value as the log stores it (JSON): what a decoded event is compared with. */
function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

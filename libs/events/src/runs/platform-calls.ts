import { decodeEventData, type EventType } from '@codemode/contracts';

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

import { isDeepStrictEqual } from 'node:util';
import { platformSettledData, type EventType, type ToolResult } from '@codemode/contracts';

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

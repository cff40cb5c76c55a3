import type { Event } from '@codemode/contracts';
import { text } from './format.js';

/**
 * What the log says of one side of a call (its input, or its outcome's value): the value when the
 * log kept it, or only its size when it did not (a run that is not replay-safe records sizes).
 */
export type Recorded = { kept: true; value: unknown } | { kept: false; bytes: number | null };

/** Where a call stands, as its run's events tell it. */
export type CallState =
  | { kind: 'open' }
  /** Called as answered only by the platform (`answeredBy: "platform"`) and not answered yet. */
  | { kind: 'platform' }
  | { kind: 'ok'; value: Recorded; durationMs: number | null }
  | { kind: 'error'; message: string | null; durationMs: number | null };

/** One tool call of a run: `tool.called`, and its `tool.settled` when there is one. */
export interface ToolCall {
  callId: string;
  tool: string;
  source: string;
  answeredBy: 'platform' | null;
  input: Recorded;
  state: CallState;
}

const number = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** The calls of one run, in the order they were made, from its events in log order. */
export function toolCallsOf(events: readonly Event[]): ToolCall[] {
  const calls = new Map<string, ToolCall>();
  for (const event of events) {
    const d = event.data;
    const callId = text(d.callId);
    if (event.type === 'tool.called' && callId) {
      const platform = d.answeredBy === 'platform';
      calls.set(callId, {
        callId,
        tool: text(d.tool, 'tool'),
        source: text(d.source, 'unknown'),
        answeredBy: platform ? 'platform' : null,
        input: 'input' in d ? { kept: true, value: d.input } : { kept: false, bytes: number(d.inputBytes) },
        state: { kind: platform ? 'platform' : 'open' },
      });
    } else if (event.type === 'tool.settled') {
      const call = calls.get(callId);
      if (call) call.state = settledState(d);
    } else if (event.type === 'run.parked' || event.type === 'run.waited') {
      // A run parked for pending calls lists them with their inputs, replay-safe or not.
      for (const pending of pendingCalls(d.result)) {
        const call = calls.get(pending.id);
        if (call && !call.input.kept && 'input' in pending) call.input = { kept: true, value: pending.input };
      }
    }
  }
  return [...calls.values()];
}

/** The `pendingToolCalls` of a recorded `waiting` result (none for anything else). */
function pendingCalls(result: unknown): { id: string; input?: unknown }[] {
  const pending = (result as { pendingToolCalls?: unknown } | null | undefined)?.pendingToolCalls;
  if (!Array.isArray(pending)) return [];
  return pending.filter((call): call is { id: string; input?: unknown } => typeof (call as { id?: unknown } | null)?.id === 'string');
}

/** A `tool.settled`'s outcome: `result` / `failure` are kept for replay-safe runs; a worker's `error` always is. */
function settledState(d: Record<string, unknown>): CallState {
  const durationMs = number(d.durationMs);
  if (d.ok === true) {
    return {
      kind: 'ok',
      value: 'result' in d ? { kept: true, value: d.result } : { kept: false, bytes: number(d.resultBytes) },
      durationMs,
    };
  }
  const failure = d.failure as { message?: unknown } | undefined;
  const message = text(d.error) || text(failure?.message) || null;
  return { kind: 'error', message, durationMs };
}

/**
 * The most of one input or output the run view shows, in characters of its JSON: enough to read
 * a call, bounded so a call that moved megabytes cannot make the page slow.
 */
export const SHOWN_CHARS = 2048;

/** `whole` cut at SHOWN_CHARS, with a marker saying how much there was. */
export function bounded(whole: string, limit = SHOWN_CHARS): string {
  if (whole.length <= limit) return whole;
  return `${whole.slice(0, limit)}… (cut: ${limit} of ${whole.length} characters shown)`;
}

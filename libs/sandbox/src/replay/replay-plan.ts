import type { LegJournal, ReplayPlan } from '@codemode/contracts';

/** A tool call as the log recorded it: `tool.called`, and `tool.settled` once it settled. */
export interface RecordedToolCall {
  tool: string;
  inputJson: string;
  outcome?: { ok: boolean; payload: string };
}

/** The log lacks what a journal points at: the run cannot be rebuilt (never guessed). */
export class ReplayRecordMissingError extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'ReplayRecordMissingError';
  }
}

/**
 * Joins a run's parked-leg journals with its recorded tool calls into the plan the sandbox
 * follows: journal settlements get their payloads (yields and sleeps `null`, tool results from
 * `tool.settled`), and calls settled in the log but by no journal (still open when the run
 * parked, or made by the leg that was running when its worker died) become the tail.
 */
export function buildReplayPlan(journals: readonly LegJournal[], calls: ReadonlyMap<string, RecordedToolCall>): ReplayPlan {
  const journaled = new Set<string>();
  const legs = journals.map((journal) => {
    for (const [id] of journal.settled) journaled.add(id);
    const settled = journal.settled.map(([id, ok, payload]): [string, boolean, string] => [id, ok, payload ?? recordedPayload(id, calls)]);
    return {
      calls: journal.calls,
      settled,
      ...(journal.open ? { open: journal.open } : {}),
      ...(journal.timers ? { timers: journal.timers } : {}),
    };
  });
  const tail: ReplayPlan['tail'] = {};
  for (const [id, call] of calls) {
    if (journaled.has(id) || !call.outcome) continue;
    tail[id] = { tool: call.tool, inputJson: call.inputJson, ok: call.outcome.ok, payload: call.outcome.payload };
  }
  return { legs, clock: journals.flatMap((journal) => journal.clock), tail };
}

function recordedPayload(id: string, calls: ReadonlyMap<string, RecordedToolCall>): string {
  const method = id.slice(id.indexOf(':') + 1, id.lastIndexOf(':'));
  if (method === 'yield' || method === 'sleep') return 'null';
  const outcome = calls.get(id)?.outcome;
  if (!outcome) throw new ReplayRecordMissingError(`the log has no recorded result for ${id}`);
  return outcome.payload;
}

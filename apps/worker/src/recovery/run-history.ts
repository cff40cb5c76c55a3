import {
  LegJournalSchema,
  RunRecoverySeedSchema,
  RunRequestedDataSchema,
  type LegJournal,
  type RunRecoverySeed,
} from '@codemode/contracts';
import type { LoggedEvent } from '@codemode/events';
import type { RecordedToolCall } from '@codemode/sandbox';
import type { z } from 'zod';

/** What the log says about one run, as recovery needs it. */
export interface RunHistory {
  requested: z.infer<typeof RunRequestedDataSchema> | null;
  /** restartSafe runs: the seed and catalog hash of `run.started`. */
  recovery: RunRecoverySeed | null;
  /** Journals of the legs that parked, in order. */
  journals: LegJournal[];
  /** Tool calls by bridge id, with their recorded input and outcome. */
  calls: Map<string, RecordedToolCall>;
  /** The run did something outside its VM: called a tool, or committed its store. */
  sideEffects: boolean;
  /** The run parked at least once (it is past its first leg). */
  parked: boolean;
  /** Why the run cannot be rebuilt from this log, if it cannot. */
  unreplayable: string | null;
}

/** Reads one run's events (oldest first, from its session's log) into a RunHistory. */
export function runHistory(events: readonly LoggedEvent[], runId: string): RunHistory {
  const history: RunHistory = {
    requested: null,
    recovery: null,
    journals: [],
    calls: new Map(),
    sideEffects: false,
    parked: false,
    unreplayable: null,
  };
  let parked = false;
  for (const event of events) {
    if (event.runId !== runId) continue;
    const data = event.data;
    switch (event.type) {
      case 'run.requested': {
        const parsed = RunRequestedDataSchema.safeParse(data);
        history.requested = parsed.success ? parsed.data : null;
        break;
      }
      case 'run.started': {
        const parsed = RunRecoverySeedSchema.safeParse(data.recovery);
        history.recovery = parsed.success ? parsed.data : null;
        break;
      }
      case 'run.resumed':
        parked = false;
        break;
      case 'run.parked': {
        // A park written twice (a retry after a reply lost to an outage) is one leg.
        if (parked) break;
        parked = true;
        history.parked = true;
        const parsed = LegJournalSchema.safeParse(data.journal);
        if (parsed.success) history.journals.push(parsed.data);
        else history.unreplayable ??= `parked leg ${history.journals.length + 1} has no journal in the log`;
        break;
      }
      case 'store.committed':
        history.sideEffects = true;
        break;
      case 'tool.called':
        history.sideEffects = true;
        if (typeof data.callId === 'string' && typeof data.tool === 'string') {
          history.calls.set(data.callId, { tool: data.tool, inputJson: JSON.stringify(data.input ?? {}) });
        }
        break;
      case 'tool.settled':
        if (typeof data.callId === 'string') recordOutcome(history.calls.get(data.callId), data);
        break;
      default:
        break;
    }
  }
  if (!history.requested) history.unreplayable ??= 'the log has no readable run.requested';
  else if (history.requested.restartSafe && !history.recovery) history.unreplayable ??= 'run.started records no random seed';
  return history;
}

/** The outcome as the guest saw it: the result's JSON, or the `{name, message}` it rejected with. */
function recordOutcome(call: RecordedToolCall | undefined, data: Record<string, unknown>): void {
  if (!call) return;
  if (data.ok === true && 'result' in data) call.outcome = { ok: true, payload: JSON.stringify(data.result ?? null) };
  else if (data.ok === false && isFailure(data.failure)) call.outcome = { ok: false, payload: JSON.stringify(data.failure) };
}

function isFailure(value: unknown): value is { name: string; message: string } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}

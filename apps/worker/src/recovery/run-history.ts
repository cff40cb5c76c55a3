import {
  decodeEventData,
  settledOutcome,
  type CellSpec,
  type EventData,
  type ShellConfig,
  type LegJournal,
  type RunRecoverySeed,
  type ToolSettledData,
} from '@codemode/contracts';
import type { LoggedEvent } from '@codemode/events';
import type { RecordedToolCall } from '@codemode/sandbox';

/** What the log says about one run, as recovery needs it. */
export interface RunHistory {
  requested: EventData<'run.requested'> | null;
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

/**
 * The run's whole spec as its `run.requested` records it: the one source of a recovered run's
 * spec. A log written before the shell settings and agent were recorded there takes them from
 * `older` (a parked image's record, or a re-delivered cell job), else the worker's shell defaults
 * and no agent. Null when the log has no readable `run.requested`.
 */
export function recordedSpec(
  history: RunHistory,
  older: { shell?: ShellConfig; agentId?: string | null } | null,
  shellDefaults: ShellConfig,
): CellSpec | null {
  const requested = history.requested;
  if (!requested) return null;
  const { title, code, restartSafe, awaitResults, limits } = requested;
  const shell = requested.shell ?? older?.shell ?? shellDefaults;
  const agentId = requested.agentId !== undefined ? requested.agentId : (older?.agentId ?? null);
  // SPEC §15: recorded only when the session had `agents: true`.
  return { title, code, restartSafe, awaitResults, limits, shell, agentId, ...(requested.agents === true ? { agents: true } : {}) };
}

/** Reads one run's events (oldest first, `EventLog.runEvents`) into a RunHistory. */
export function runHistory(events: readonly LoggedEvent[]): RunHistory {
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
    switch (event.type) {
      case 'run.requested':
        history.requested = decodeEventData(event.type, event.data);
        break;
      case 'run.started':
        history.recovery = decodeEventData(event.type, event.data)?.recovery ?? null;
        break;
      case 'run.resumed':
        parked = false;
        break;
      case 'run.parked': {
        // A park written twice (a retry after a reply lost to an outage) is one leg.
        if (parked) break;
        parked = true;
        history.parked = true;
        const journal = decodeEventData(event.type, event.data)?.journal;
        if (journal) history.journals.push(journal);
        else history.unreplayable ??= `parked leg ${history.journals.length + 1} has no journal in the log`;
        break;
      }
      case 'store.committed':
        history.sideEffects = true;
        break;
      case 'tool.called': {
        history.sideEffects = true;
        const called = decodeEventData(event.type, event.data);
        if (called) history.calls.set(called.callId, { tool: called.tool, inputJson: JSON.stringify(called.input ?? {}) });
        break;
      }
      case 'tool.settled': {
        const settled = decodeEventData(event.type, event.data);
        const call = settled && history.calls.get(settled.callId);
        const outcome = settled && recordedOutcome(settled);
        if (call && outcome) call.outcome = outcome;
        break;
      }
      default:
        break;
    }
  }
  if (!history.requested) history.unreplayable ??= 'the log has no readable run.requested';
  else if (history.requested.restartSafe && !history.recovery) history.unreplayable ??= 'run.started records no random seed';
  return history;
}

/** A settled call's outcome as the guest saw it, when the log kept it: the result's JSON, or the `{name, message}` it rejected with. */
export function recordedOutcome(data: ToolSettledData): { ok: boolean; payload: string } | null {
  const outcome = settledOutcome(data);
  if (!outcome) return null;
  return outcome.ok ? { ok: true, payload: JSON.stringify(outcome.value) } : { ok: false, payload: JSON.stringify(outcome.error) };
}

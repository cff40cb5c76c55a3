import type { CodeModeResult, TranscriptEntry } from '@codemode/contracts';
import type { LoggedEvent } from '../event-encoding';
import { execInput } from './transcript-marks';

const RESULT_EVENTS = new Set(['run.parked', 'run.completed', 'run.failed', 'run.expired', 'run.lost']);

/**
 * Recomputes the transcript from the session log, by the rules of lua/includes/projections.lua:
 * an input per `run.requested`, `run.resumed` (the wait), `run.waited` and `exec.rejected`, a result per
 * `exec.rejected`, `run.waited` and per parked or terminal run event that carries one; a run's result
 * belongs to `wait` once it was resumed.
 * (A log that retention cut between a run's wait and its end no longer shows the wait: the
 * session's transcript list still says `wait` there, its mark was written while the run knew.)
 */
export function rebuildTranscript(events: readonly LoggedEvent[]): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  const callOf = new Map<string, 'exec' | 'wait'>();
  for (const event of events) {
    const { data, at } = event;
    const runId = event.runId ?? null;
    if (event.type === 'run.requested' && runId) {
      callOf.set(runId, 'exec');
      entries.push({ kind: 'input', call: 'exec', runId, at, input: execInput(data) });
    } else if (event.type === 'run.resumed' && runId) {
      callOf.set(runId, 'wait');
      if ('input' in data) entries.push({ kind: 'input', call: 'wait', runId, at, input: data.input });
    } else if (event.type === 'run.waited' && runId) {
      entries.push({ kind: 'input', call: 'wait', runId, at, input: data.input });
      entries.push({ kind: 'result', call: 'wait', runId, at, result: data.result as CodeModeResult });
    } else if (event.type === 'exec.rejected') {
      const call = data.call as 'exec' | 'wait';
      entries.push({ kind: 'input', call, runId: null, at, input: data.input });
      entries.push({ kind: 'result', call, runId: null, at, result: data.result as CodeModeResult });
    } else if (RESULT_EVENTS.has(event.type) && runId && 'result' in data) {
      entries.push({ kind: 'result', call: callOf.get(runId) ?? 'exec', runId, at, result: data.result as CodeModeResult });
    }
  }
  return entries;
}

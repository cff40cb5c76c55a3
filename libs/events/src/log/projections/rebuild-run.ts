import type { CodeModeResult, RunView, SessionRef } from '@codemode/contracts';
import type { LoggedEvent } from '../event-encoding';

const TERMINAL_STATUS: Partial<Record<string, RunView['status']>> = {
  'run.completed': 'completed',
  'run.failed': 'failed',
  'run.expired': 'expired',
  'run.lost': 'lost',
};

/**
 * Recomputes one run's projection from the session log, by the rules of
 * lua/includes/append.lua (project_run). Null when the log never requested the run.
 */
export function rebuildRun(ref: SessionRef, runId: string, events: readonly LoggedEvent[]): RunView | null {
  let run: RunView | null = null;
  for (const event of events) {
    if (event.runId !== runId) continue;
    const data = event.data;
    if (event.type === 'run.requested') {
      run = {
        runId,
        sessionId: ref.sessionId,
        title: data.title as string,
        status: 'requested',
        restartSafe: data.restartSafe === true,
        owner: null,
        epoch: event.epoch,
        createdAt: event.at,
        startedAt: null,
        endedAt: null,
        parkedAt: null,
        expiresAt: null,
        updatedAt: event.at,
        lastResult: null,
      };
      continue;
    }
    if (!run) continue;
    run.updatedAt = event.at;
    const terminal = TERMINAL_STATUS[event.type];
    if (event.type === 'run.started') {
      Object.assign(run, { status: 'running', owner: data.workerId as string, epoch: event.epoch, startedAt: event.at });
    } else if (event.type === 'run.parked') {
      Object.assign(run, { status: 'waiting', parkedAt: event.at });
      if (typeof data.expiresAt === 'string') run.expiresAt = data.expiresAt;
    } else if (event.type === 'run.resumed') {
      Object.assign(run, { status: 'running', epoch: event.epoch, parkedAt: null, expiresAt: null });
      if (typeof data.workerId === 'string') run.owner = data.workerId;
    } else if (event.type === 'run.recovered') {
      Object.assign(run, { owner: data.workerId as string, epoch: event.epoch });
    } else if (event.type === 'run.released') {
      run.owner = null;
    } else if (terminal) {
      Object.assign(run, { status: terminal, endedAt: event.at, expiresAt: null });
    }
    if ('result' in data && (terminal || event.type === 'run.parked')) {
      run.lastResult = data.result as CodeModeResult;
    }
  }
  return run;
}

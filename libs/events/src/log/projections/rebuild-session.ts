import type { Limits, ShellConfig } from '@codemode/contracts';
import type { LoggedEvent } from '../event-encoding';
import { rebuildTranscript } from './rebuild-transcript';
import type { SessionRecord } from './views';

/**
 * Recomputes the session projection from its log, by the rules lua/includes/append.lua applies:
 * created at the first event, updated at the last, configuration from the latest
 * `session.configured`, one run per `run.requested`.
 */
export function rebuildSession(events: readonly LoggedEvent[]): SessionRecord | null {
  if (events.length === 0) return null;
  const record: SessionRecord = {
    agentId: null,
    codeMode: {},
    shell: {},
    agents: false,
    notifyUrl: null,
    createdAt: events[0].at,
    updatedAt: events[events.length - 1].at,
    counts: { runs: 0, events: events.length, transcriptEntries: rebuildTranscript(events).length },
  };
  for (const event of events) {
    if (event.type === 'session.configured') {
      record.agentId = (event.data.agentId as string | null) ?? null;
      record.codeMode = event.data.codeMode as Partial<Limits>;
      record.shell = event.data.shell as Partial<ShellConfig>;
      record.agents = event.data.agents === true;
      if (typeof event.data.repairAttempts === 'number') record.repairAttempts = event.data.repairAttempts;
      else delete record.repairAttempts;
      record.notifyUrl = (event.data.notifyUrl as string | null | undefined) ?? null;
    } else if (event.type === 'run.requested') {
      record.counts.runs += 1;
    }
  }
  return record;
}

import type { LoggedEvent } from '../event-encoding';

/**
 * The names of the session's client tools by the last `tools.registered`, in registration order;
 * empty when none were registered. Endpoints and schemas are deliberately not in the log, so
 * this is all of the client tools projection a rebuild can recover.
 */
export function rebuildClientToolNames(events: readonly LoggedEvent[]): string[] {
  let names: string[] = [];
  for (const event of events) {
    if (event.type === 'tools.registered') names = [...((event.data.tools ?? []) as string[])];
  }
  return names;
}

import type { Event, EventType } from '@codemode/contracts';
import { ExitCode, type ExitCodeValue } from '../exit-codes';
import type { CommandContext } from '../context';
import { renderEvent, renderJson } from '../output';

export interface EventsArgs {
  sessionId: string;
  follow: boolean;
  after: string | undefined;
  until: EventType | undefined;
}

/** The largest page the API serves: listing a long session takes few round trips. */
const PAGE_SIZE = 1000;

/**
 * `codemode events <sid>`: lists the log page by page; with --follow, tails it over SSE until
 * Ctrl-C. --until ends either mode right after the first event of that type, which lets a
 * script wait for a run to end without polling; with --follow it is the first new one (SPEC §18):
 * without --after, the events already in the log are printed but do not end the tail, so
 * `--follow --until run.completed` waits for the next run to complete, not an earlier one.
 */
export async function eventsCommand(ctx: CommandContext, args: EventsArgs): Promise<ExitCodeValue> {
  const print = (event: Event): boolean => {
    ctx.io.stdout.write(ctx.json ? renderJson(event) : renderEvent(event));
    return args.until !== undefined && event.type === args.until;
  };
  if (args.follow) {
    const end = args.until !== undefined && args.after === undefined ? await lastEventId(ctx, args.sessionId) : null;
    for await (const event of ctx.client.followEvents(args.sessionId, { after: args.after, signal: ctx.io.signal })) {
      if (print(event) && (end === null || isAfter(event.id, end))) break;
    }
    return ExitCode.ok;
  }
  let after = args.after;
  for (;;) {
    const page = await ctx.client.events(args.sessionId, { after, limit: PAGE_SIZE });
    for (const event of page.events) if (print(event)) return ExitCode.ok;
    if (page.next === null || page.events.length === 0) return ExitCode.ok;
    after = page.next;
  }
}

/** The id of the session's last event now (null when it has none): what a follow's --until must come after. */
async function lastEventId(ctx: CommandContext, sessionId: string): Promise<string | null> {
  let after: string | undefined;
  let last: string | null = null;
  for (;;) {
    const page = await ctx.client.events(sessionId, { after, limit: PAGE_SIZE });
    last = page.events.at(-1)?.id ?? last;
    if (page.next === null || page.events.length === 0) return last;
    after = page.next;
  }
}

/** Stream ids (`<ms>-<seq>`) in log order. */
export function isAfter(id: string, than: string): boolean {
  const [ms, seq] = id.split('-').map(BigInt);
  const [thanMs, thanSeq] = than.split('-').map(BigInt);
  return ms > thanMs || (ms === thanMs && seq > thanSeq);
}

import type { Event, EventData, EventType } from '@codemode/contracts';
import { InvalidEventError, StoreCommandError } from '../platform/errors';
import { unpackEventData } from './event-packing';
import { compactDataText, eventTypeOf } from './entry-codes';

/**
 * An event as stored, with the writer's epoch (the REST `Event` leaves it out). Its `data` is as
 * stored, not decoded: the REST feed serves it so, and a reader that needs fields decodes them
 * with `decodeEventData` (libs/contracts/src/event-data.ts), which answers null for data that
 * does not parse (an older build's, say) rather than failing the read.
 */
export type LoggedEvent = Event & { epoch: number };

/**
 * What the append scripts take for one event: the data without its raw fields (`head`), the raw
 * fields as JSON text spliced in verbatim, and the plain-string facts the projections need.
 * Lua never decodes user-written JSON (cjson chokes on lone surrogates and rounds numbers), so
 * everything a projection reads out of the data is handed over here, derived from the same object.
 */
export interface EncodedEvent {
  head: string;
  raws: [name: string, json: string][];
  facts: Record<string, string>;
}

/** Data fields spliced in verbatim, never decoded by Lua (projections name their events instead). */
const RAW_FIELDS = ['input', 'result'] as const;

/** Encodes `data` for the append scripts (lua/append-event.lua, and those that take a head and raws). */
export function encodeEvent<T extends EventType>(type: T, data: EventData<T>): EncodedEvent {
  const rest: Record<string, unknown> = { ...data };
  const raws: [string, string][] = [];
  for (const name of RAW_FIELDS) {
    if (name in rest) {
      raws.push([name, JSON.stringify(rest[name]) ?? 'null']);
      delete rest[name];
    }
  }
  return { head: JSON.stringify(rest), raws, facts: factsOf(type, data) };
}

/**
 * `run.requested` as lua/request-run.lua takes it. The title and code are spliced in raw (Lua never
 * decodes user-written text); the shell settings and agent follow them, spliced too, so the cell's
 * own fields lead the data as they did before those were recorded (one-line views of the log cut
 * the data short).
 */
export function encodeRunRequested(
  data: EventData<'run.requested'>,
  idempotencyKey: string | undefined,
): { head: string; raws: [name: string, json: string][] } {
  const { title, code, restartSafe, awaitResults, limits, shell, agentId, agents, requestId } = data;
  const head = JSON.stringify({
    restartSafe,
    awaitResults,
    limits,
    ...(agents === true ? { agents } : {}),
    ...(idempotencyKey ? { idempotencyKey } : {}),
  });
  const raws: [string, string][] = [
    ['title', JSON.stringify(title)],
    ['code', JSON.stringify(code)],
  ];
  if (shell) raws.push(['shell', JSON.stringify(shell)]);
  if (agentId !== undefined) raws.push(['agentId', JSON.stringify(agentId)]);
  // SPEC §19: last, after the cell's own fields (the request id matches [A-Za-z0-9._-]{1,128}).
  if (requestId !== undefined) raws.push(['requestId', JSON.stringify(requestId)]);
  return { head, raws };
}

function factsOf(type: EventType, data: Record<string, unknown>): Record<string, string> {
  const facts: Record<string, string> = {};
  const str = (name: string) => {
    const value = data[name];
    if (typeof value === 'string') facts[name] = value;
  };
  // The run hash keeps a result's replaySafe for the run listing (projections.lua), not the result.
  const result = data.result as { replaySafe?: unknown } | null | undefined;
  if (typeof result?.replaySafe === 'boolean') facts.replaySafe = String(result.replaySafe);
  switch (type) {
    case 'run.parked':
      str('expiresAt');
      break;
    case 'run.resumed':
      str('workerId');
      break;
    case 'exec.rejected':
      if (data.call !== 'exec' && data.call !== 'wait') throw new InvalidEventError(`${type} without call`);
      facts.call = data.call;
      break;
    default:
      break;
  }
  return facts;
}

/** Flattens an encoded event into the ARGV tail `n, raws..., facts...`. */
export function rawsAndFactsArgs(ev: Pick<EncodedEvent, 'raws' | 'facts'>): string[] {
  return [String(ev.raws.length), ...ev.raws.flat(), ...Object.entries(ev.facts).flat()];
}

/** One XRANGE/XREAD entry → LoggedEvent. */
export function decodeEntry(entry: [id: string, fields: string[]]): LoggedEvent {
  const [id, fields] = entry;
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]] = fields[i + 1];
  const type = eventTypeOf(f.type ?? '');
  const stored = f.data ?? '{}';
  const text = compactDataText(type, stored, f.runId ?? '', f.epoch ?? '0') ?? unpackEventData(stored);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new StoreCommandError(err);
  }
  return {
    id,
    type,
    ...(f.runId ? { runId: f.runId } : {}),
    // An entry kept compact carries `at` as its id's millisecond (append.lua xadd).
    at: f.at ?? new Date(Number(id.slice(0, id.indexOf('-')))).toISOString(),
    data: data as Record<string, unknown>,
    epoch: Number(f.epoch ?? 0),
  };
}

/** Drops the stored epoch: the REST shape of an event. */
export function toPublicEvent({ epoch: _epoch, ...event }: LoggedEvent): Event {
  return event;
}

/**
 * A store commit as lua/commit-store.lua takes it. `fields` are the store keys as JSON string
 * text: Node would turn a lone surrogate in a key into U+FFFD on its way to Redis, its JSON
 * escape survives. `data` is the event data `{runId, set, deleted}` spliced from the same texts,
 * so the log and the store hash hold byte-identical values.
 */
export interface EncodedStoreCommit {
  data: string;
  sets: [field: string, json: string][];
  deleted: string[];
}

/** Encodes a commit's writes (key → value JSON text, or null to delete). */
export function encodeStoreCommit(runId: string, writes: ReadonlyMap<string, string | null>): EncodedStoreCommit {
  const sets: [string, string][] = [];
  const deleted: string[] = [];
  for (const [key, json] of writes) {
    if (json === null) deleted.push(JSON.stringify(key));
    else sets.push([JSON.stringify(key), json]);
  }
  const set = sets.map(([field, json]) => `${field}:${json}`).join(',');
  const data = `{"runId":${JSON.stringify(runId)},"set":{${set}},"deleted":[${deleted.join(',')}]}`;
  return { data, sets, deleted };
}

/** The store key a hash field (JSON string text, see encodeStoreCommit) stands for. */
export function storeKeyOfField(field: string): string {
  try {
    return JSON.parse(field) as string;
  } catch (err) {
    throw new StoreCommandError(err);
  }
}

/**
 * `tools.registered` as lua/register-tools.lua takes it: the event data holds names and count
 * only (no endpoints, no schemas); the full list goes to the projection key alone.
 */
export function encodeToolsRegistered(tools: readonly { name: string }[]): { data: string; toolsJson: string } {
  const names = tools.map((tool) => tool.name);
  const data: EventData<'tools.registered'> = { tools: names, count: names.length };
  return { data: JSON.stringify(data), toolsJson: JSON.stringify(tools) };
}

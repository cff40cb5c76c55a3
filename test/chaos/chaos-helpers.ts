import { CodeModeResultSchema, TERMINAL_EVENT_TYPES, type CodeModeResult, type Event } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import type { Redis } from 'ioredis';

/** SPEC §3 / the service's exact answers that the chaos tests match on. */
export const RUN_UNAVAILABLE_ERROR = 'code mode run is unavailable or expired.';
/** SPEC §3: what a `wait` on a run that has ended answers. */
export function endedRunError(sessionId: string, runId: string): string {
  return `${RUN_UNAVAILABLE_ERROR} Read its outcome with GET /v1/sessions/${sessionId}/runs/${runId}.`;
}
export const RUN_BEING_RESUMED_ERROR = 'code mode run is already being resumed.';
/** The API's answer when a started run's pushed answer did not arrive within its budget (same code as SPEC §2). */
export const NO_ANSWER_ERROR =
  'the worker running this cell did not answer within its budget; read GET /v1/sessions/{sid}/runs/{runId} for its outcome.';
export const NOT_STARTED_ERROR = 'no worker started the cell within its budget; it was not run.';
/** SPEC §2: "an error that says the store is unavailable and to retry". */
export const STORE_UNAVAILABLE_PATTERN = /unavailable[\s\S]*retry/i;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One HTTP exchange of exec or wait: what came back, or why nothing did. */
export type Exchange =
  | { kind: 'answer'; result: CodeModeResult; at: number }
  | { kind: 'http_error'; status: number; text: string; at: number }
  | { kind: 'no_answer'; error: string; at: number };

/** POSTs exec/wait without throwing: a 200 with a valid CodeModeResult is an answer, anything else is recorded. */
export async function post(client: CodeModeClient, path: string, body: unknown, opts: { idempotencyKey?: string } = {}): Promise<Exchange> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
  try {
    const res = await client.raw('POST', path, { body: JSON.stringify(body), headers });
    if (res.status !== 200) return { kind: 'http_error', status: res.status, text: res.text.slice(0, 500), at: Date.now() };
    const parsed = CodeModeResultSchema.safeParse(res.body);
    if (!parsed.success)
      return { kind: 'http_error', status: res.status, text: `not a CodeModeResult: ${res.text.slice(0, 500)}`, at: Date.now() };
    return { kind: 'answer', result: parsed.data, at: Date.now() };
  } catch (error) {
    return { kind: 'no_answer', error: error instanceof Error ? `${error.name}: ${error.message}` : String(error), at: Date.now() };
  }
}

export function execPath(sid: string): string {
  return `/v1/sessions/${encodeURIComponent(sid)}/exec`;
}

export function waitPath(sid: string): string {
  return `/v1/sessions/${encodeURIComponent(sid)}/wait`;
}

/** Every event of a session, following `next` pages. */
export async function allEvents(client: CodeModeClient, sid: string): Promise<Event[]> {
  const out: Event[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await client.events(sid, { limit: 1000, ...(after === undefined ? {} : { after }) });
    out.push(...page.events);
    if (page.next === null || page.events.length === 0) return out;
    after = page.next;
  }
}

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_EVENT_TYPES);

/** runId → its terminal events, for every run the log mentions (runs with none map to []). */
export function terminalsByRun(events: Event[]): Map<string, Event[]> {
  const out = new Map<string, Event[]>();
  for (const e of events) {
    if (!e.runId) continue;
    const list = out.get(e.runId) ?? [];
    if (TERMINAL.has(e.type)) list.push(e);
    out.set(e.runId, list);
  }
  return out;
}

/** A short, readable form of an exchange for failure messages. */
export function show(exchange: Exchange | undefined): string {
  if (!exchange) return 'none';
  if (exchange.kind === 'answer') {
    const r = exchange.result;
    if (r.status === 'completed') return `completed ${JSON.stringify(r.value)}`;
    if (r.status === 'waiting') return `waiting ${r.reason} ${r.runId}`;
    return `failed ${r.code ?? '-'} ${r.error}`;
  }
  if (exchange.kind === 'http_error') return `HTTP ${exchange.status} ${exchange.text}`;
  return `no answer: ${exchange.error}`;
}

/**
 * SPEC §13 "no log storm": the most lines one message got within one second of a process's JSON
 * logs (pino's ISO `time`), with that message. The service logs a Redis failure at most once a
 * second per cause, so a message over a few a second is a storm.
 */
export function busiestLogSecond(logs: string): { msg: string; lines: number } {
  const counts = new Map<string, number>();
  for (const line of logs.split('\n')) {
    let entry: { time?: unknown; msg?: unknown };
    try {
      entry = JSON.parse(line) as { time?: unknown; msg?: unknown };
    } catch {
      continue;
    }
    if (typeof entry.time !== 'string' || typeof entry.msg !== 'string') continue;
    const key = `${entry.time.slice(0, 19)} ${entry.msg}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let busiest = { msg: '', lines: 0 };
  for (const [key, lines] of counts) if (lines > busiest.lines) busiest = { msg: key.slice(20), lines };
  return busiest;
}

/**
 * Sets `maxmemory` just under what Redis uses now (under `noeviction`), so every growing write is
 * refused. A margin of 1 MiB: with 64 KiB, client buffers shrinking after the CONFIG SET could
 * bring used_memory back under the limit, and the writes a test expects refused went through.
 */
export async function fillRedis(admin: Redis): Promise<void> {
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
  const info = await admin.info('memory');
  const used = Number(/used_memory:(\d+)/.exec(info)![1]);
  await admin.config('SET', 'maxmemory', String(used - 1024 * 1024));
}

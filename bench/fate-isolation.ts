import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from '../test/utils/test-stack';
import { fmt, percentile } from './stats';

/** How long each attack runs while the victim is measured (SPEC §10 says 30 s for the thread attack). */
const ATTACK_SECONDS = Number(process.env.BENCH_FATE_SECONDS ?? 30);
const VICTIM_KEY = 'bench-fate-victim';
const ATTACKER_KEY = 'bench-fate-attacker';
const THREADS = 2;
/** 1 MiB execs making the attacker's history for the stream attack (~200 MB by default). */
const HISTORY_EXECS = Number(process.env.BENCH_FATE_HISTORY_EXECS ?? 200);

export interface FateRow {
  attack: string;
  /** The victim's `GET /v1/sessions/{sid}`. */
  read: { p50: number; p99: number; n: number };
  /** The victim's `return 1` exec (or, for the thread attack, cells that wait on a 4 s shell command). */
  exec: { p50: number; p99: number; n: number; failed: string[] };
  /** What the attacker's own requests came to, and the API's resident memory at the end. */
  note: string;
  /** The victim ran the 4 s shell cell instead of `return 1`. */
  shellCell: boolean;
}

/** A cell that keeps a sandbox thread in one long native search (SPEC §10 "Sandbox threads"). */
const PATHOLOGICAL = 'const s = "a".repeat(2e7); return s.indexOf("a".repeat(5000) + "b");';
/** A valid cell of ~1 MiB: acorn parses all of it. */
const BIG_CODE = `const xs = [${Array.from({ length: 150_000 }, (_, i) => i % 1000).join(',')}];\nreturn xs.length;`;

/**
 * SPEC §10 "Fate isolation", measured: a victim tenant's reads and trivial execs on an idle
 * multi-tenant deployment, then while an attacker tenant runs each attack of issue 23 at its
 * quotas for `ATTACK_SECONDS`. Under the thread attack the victim's cells wait on a 4 s shell
 * command, so a thread terminated under them would fail them.
 */
export async function measureFateIsolation(): Promise<FateRow[]> {
  const stack = await TestStack.start({
    workers: 1,
    apiKeys: `${VICTIM_KEY}:victim,${ATTACKER_KEY}:attacker`,
    env: { CODEMODE_SANDBOX_THREADS: String(THREADS), CODEMODE_TENANT_RATE: '1000', CODEMODE_TENANT_BURST: '2000' },
  });
  try {
    const victim = stack.client(VICTIM_KEY);
    const attacker = stack.client(ATTACKER_KEY);
    await victim.putSession('v', { codeMode: { timeoutMs: 20_000 } });
    await attacker.putSession('a-files', { codeMode: { timeoutMs: 30_000 } });
    await attacker.putSession('a-threads', { codeMode: { timeoutMs: 1000 } });
    await victim.exec('v', { title: 'warm', code: 'return 1' });
    const rows: FateRow[] = [];
    const measure = async (attack: string, run: (stop: () => boolean) => Promise<string>, cell?: string): Promise<void> => {
      let stopped = false;
      const attackDone = run(() => stopped);
      await sleep(500);
      const measured = await victimLoad(victim, ATTACK_SECONDS * 1000, cell);
      stopped = true;
      const note = await attackDone;
      rows.push({ attack, ...measured, note: `${note}; API RSS ${fmt(rssMiB(stack.api.pid), 0)} MiB`, shellCell: cell !== undefined });
    };
    await measure('none (idle deployment)', () => Promise.resolve('—'));
    await measure('32 concurrent 1 MiB execs', (stop) => lanes(32, stop, () => attacker.exec('a', { title: 'big', code: BIG_CODE })));
    // ~11 MB of valid registrations: 170 tools at the description and schema size caps.
    const bigTools = Array.from({ length: 170 }, (_, i) => ({
      name: `tool_${i}`,
      description: 'd'.repeat(8000),
      endpoint: 'https://tools.example.invalid/hook',
      inputSchema: { type: 'object', description: 's'.repeat(56_000) },
    }));
    // Serialized once, answers drained unread: this process also measures the victim, so it must not
    // spend its own event loop on 20 × 11 MB of JSON each way.
    const toolsBody = Buffer.from(JSON.stringify({ tools: bigTools }));
    await measure('20 concurrent `PUT /tools` of ~11 MB', (stop) =>
      lanes(20, stop, () => sendDrained(stack.baseUrl, ATTACKER_KEY, 'PUT', '/v1/sessions/a-tools/tools', toolsBody)),
    );
    await attacker.exec('a-files', {
      title: 'plant',
      code: `await exec({ command: "head -c 67108864 /dev/zero | tr '\\\\0' '\\\\n' > nl.txt" }); return 1`,
    });
    await measure('`read` of a 64 MiB file of newlines, 2 at a time', (stop) =>
      lanes(2, stop, () => attacker.exec('a-files', { title: 'read', code: 'const r = await read({ path: "nl.txt" }); return 1' })),
    );
    await measure(
      `one pathological \`indexOf\` cell per sandbox thread (${THREADS}) every second`,
      (stop) => everySecond(THREADS, stop, () => attacker.exec('a-threads', { title: 'search', code: PATHOLOGICAL })),
      'await exec({ command: "sleep 4", yieldMs: 8000 }); store("k", (load("k") ?? 0) + 1); return 1',
    );
    await attacker.exec('a-hist', { title: 'history', code: `return ${JSON.stringify('h'.repeat(1000))}.length` });
    for (let i = 0; i < HISTORY_EXECS; i += 1) await attacker.exec('a-hist', { title: 'history', code: BIG_CODE });
    await measure(`8 event streams of a ~${HISTORY_EXECS} MB history, never read`, (stop) => unreadStreams(stack.baseUrl, 8, stop));
    return rows;
  } finally {
    await stack.stop();
  }
}

async function victimLoad(victim: CodeModeClient, ms: number, cell = 'return 1'): Promise<Pick<FateRow, 'read' | 'exec'>> {
  const reads: number[] = [];
  const execs: number[] = [];
  const failed: string[] = [];
  const until = Date.now() + ms;
  const readLoop = async (): Promise<void> => {
    while (Date.now() < until) {
      const t = performance.now();
      const answer = await victim.raw('GET', '/v1/sessions/v');
      reads.push(performance.now() - t);
      if (answer.status !== 200) failed.push(`GET ${answer.status}`);
      await sleep(50);
    }
  };
  const execLoop = async (): Promise<void> => {
    while (Date.now() < until) {
      const t = performance.now();
      const r = await victim.exec('v', { title: 'victim', code: cell });
      execs.push(performance.now() - t);
      if (r.status !== 'completed') failed.push(`${r.status}: ${r.status === 'failed' ? r.error : ''}`.slice(0, 160));
    }
  };
  await Promise.all([readLoop(), execLoop(), execLoop()]);
  return {
    read: { p50: percentile(reads, 50), p99: percentile(reads, 99), n: reads.length },
    exec: { p50: percentile(execs, 50), p99: percentile(execs, 99), n: execs.length, failed },
  };
}

/** `n` lanes each repeating `op` until stopped; returns how the attacker's requests ended. */
async function lanes(n: number, stop: () => boolean, op: () => Promise<unknown>): Promise<string> {
  const outcomes = new Map<string, number>();
  const count = (key: string): void => void outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (!stop()) {
        await op().then(
          (r) => count(outcomeOf(r)),
          (error: unknown) => count(error instanceof Error ? error.message.slice(0, 60) : 'error'),
        );
      }
    }),
  );
  return describeOutcomes(outcomes);
}

/** `n` calls started together once a second until stopped. */
async function everySecond(n: number, stop: () => boolean, op: () => Promise<unknown>): Promise<string> {
  const outcomes = new Map<string, number>();
  const pending: Promise<void>[] = [];
  while (!stop()) {
    for (let i = 0; i < n; i += 1) pending.push(op().then((r) => void outcomes.set(outcomeOf(r), (outcomes.get(outcomeOf(r)) ?? 0) + 1)));
    await sleep(1000);
  }
  await Promise.allSettled(pending);
  return describeOutcomes(outcomes);
}

function outcomeOf(r: unknown): string {
  const answer = r as { status?: string; code?: string };
  return answer.code ? `${answer.status}/${answer.code}` : String(answer.status ?? 'ok');
}

function describeOutcomes(outcomes: Map<string, number>): string {
  return [...outcomes].map(([k, v]) => `${v}× ${k}`).join(', ') || 'none';
}

/** `n` SSE connections that read a few bytes and then never again (the socket stays open). */
async function unreadStreams(baseUrl: string, n: number, stop: () => boolean): Promise<string> {
  const url = new URL('/v1/sessions/a-hist/events', baseUrl);
  const statuses: number[] = [];
  const requests = Array.from({ length: n }, () =>
    request(url, { headers: { authorization: `Bearer ${ATTACKER_KEY}`, accept: 'text/event-stream' } }),
  );
  for (const req of requests) {
    req.on('response', (res) => {
      statuses.push(res.statusCode ?? 0);
      res.pause();
    });
    req.on('error', () => statuses.push(-1));
    req.end();
  }
  while (!stop()) await sleep(200);
  for (const req of requests) req.destroy();
  return `streams answered ${statuses.join(', ')}`;
}

/** One request whose answer is read and dropped unparsed; resolves to `{status}`. */
function sendDrained(baseUrl: string, key: string, method: string, path: string, body: Buffer): Promise<{ status: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, baseUrl), {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': body.length },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: String(res.statusCode) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function rssMiB(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function fateIsolationTable(rows: FateRow[]): string {
  const idle = rows[0];
  return [
    `| attacker tenant (${ATTACK_SECONDS} s each, at its quotas) | victim \`GET /v1/sessions/{sid}\` p50 / p99 (ms) | victim exec p50 / p99 (ms) | exec p50 ÷ idle | victim failures | attacker's outcomes; API memory |`,
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.attack} | ${fmt(r.read.p50)} / ${fmt(r.read.p99)} (${r.read.n}) | ${fmt(r.exec.p50)} / ${fmt(r.exec.p99)} (${r.exec.n}) | ${r.shellCell ? '— (4 s shell cells)' : `${fmt(r.exec.p50 / idle.exec.p50)}×`} | ${r.exec.failed.length === 0 ? 'none' : `${r.exec.failed.length}: ${[...new Set(r.exec.failed)].join('; ')}`} | ${r.note} |`,
    ),
  ].join('\n');
}

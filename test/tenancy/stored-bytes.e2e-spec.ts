import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeModeClient } from '@codemode/client';
import type { CodeModeResult } from '@codemode/contracts';
import { TestStack } from '../utils/test-stack';

/**
 * SPEC §10 "Redis storage": the attacker (2 MiB of stored bytes) fills its quota with large
 * results; its exec is then refused with the exact answer and nothing recorded, its session
 * writes get 429 stored_bytes; DELETE gives the space back; a parked run is aborted by the DELETE
 * of its session; the victim (SPEC default quota) runs, stores and reads throughout, and its
 * session cannot be deleted by the attacker.
 */
const run = randomBytes(4).toString('hex');
const keys = { attacker: `sa-${run}`, victim: `sv-${run}` };
const QUOTA = 2 * 1024 * 1024;
const STORAGE_ERROR = 'code mode storage quota reached for this tenant; delete sessions or wait for retention to free space.';
/** A cell whose result is truncated to ~64 KB (SPEC §3): counted once, in the log (the run hash and the transcript name its event). */
const bigCell = { title: 'fill', code: 'return "x".repeat(400000)' };

let stack: TestStack;
let dir: string;
let attacker: CodeModeClient;
let victim: CodeModeClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stored-bytes-'));
  const file = join(dir, 'tenants.json');
  writeFileSync(file, JSON.stringify({ attacker: { quotas: { maxStoredBytes: QUOTA } } }));
  stack = await TestStack.start({
    apiKeys: `${keys.attacker}:attacker,${keys.victim}:victim`,
    env: { CODEMODE_TENANTS_FILE: file },
  });
  attacker = stack.client(keys.attacker);
  victim = stack.client(keys.victim);
});

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const del = (client: CodeModeClient, sid: string) => client.raw('DELETE', `/v1/sessions/${sid}`);

/** The victim's exec completes and writes to its store, and its earlier writes are intact. */
async function victimIntact(round: number): Promise<void> {
  const result = await victim.exec('v', { title: `v${round}`, code: `store("k${round}", ${round}); return load("k0")` });
  expect(result).toMatchObject({ status: 'completed', value: 0 });
  const stored = await victim.raw('GET', '/v1/sessions/v/store');
  expect(stored.status).toBe(200);
  const values = (stored.body as { values: Record<string, unknown> }).values;
  for (let i = 0; i <= round; i++) expect(values[`k${i}`]).toBe(i);
}

/** Execs until one is refused (the total is reconciled just after each exec answers). */
async function fillUntilRefused(sid: string): Promise<CodeModeResult> {
  for (let i = 0; i < 48; i++) {
    const result = await attacker.exec(sid, bigCell);
    if (result.status === 'failed') return result;
    expect(result).toMatchObject({ status: 'completed' });
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the attacker was never refused');
}

test('past its stored bytes, the attacker is refused before anything is written; DELETE gives the space back; the victim is untouched', async () => {
  await victimIntact(0);
  // A parked run, made before the quota is reached: the DELETE of its session aborts it first.
  const parked = await attacker.exec('parked', { title: 'park', code: 'await yield_control(); return "resumed"' });
  expect(parked.status).toBe('waiting');

  const refused = await fillUntilRefused('fill-a');
  expect(refused).toMatchObject({ status: 'failed', code: 'runtime_unavailable', error: STORAGE_ERROR });
  const before = await attacker.getSession('fill-a');
  const again = await attacker.exec('fill-a', { title: 'refused-title', code: 'return 1' });
  expect(again).toMatchObject({ status: 'failed', code: 'runtime_unavailable', error: STORAGE_ERROR });
  // Nothing recorded: no run, no transcript entry, no new session.
  expect((await attacker.getSession('fill-a')).counts).toEqual(before.counts);
  expect(JSON.stringify(await attacker.transcript('fill-a'))).not.toContain('refused-title');
  expect((await attacker.exec('fresh', { title: 't', code: 'return 1' })).status).toBe('failed');
  expect((await attacker.raw('GET', '/v1/sessions/fresh')).status).toBe(404);

  // Other writing routes: 429 stored_bytes with Retry-After, nothing written.
  for (const [method, path, body] of [
    ['PUT', '/v1/sessions/fill-a/tools', { tools: [{ name: 'lookup', description: 'd', inputSchema: { type: 'object' } }] }],
    ['PUT', '/v1/sessions/fill-b', { agentId: 'x' }],
  ] as const) {
    const answer = await attacker.raw(method, path, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(429);
    expect(answer.body).toEqual({ error: STORAGE_ERROR, code: 'tenant_limit', details: { limit: 'stored_bytes' } });
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }
  expect((await attacker.raw('GET', '/v1/sessions/fill-b')).status).toBe(404);
  // Reads still answer.
  expect((await attacker.raw('GET', '/v1/sessions/fill-a')).status).toBe(200);
  await victimIntact(1);

  // The attacker cannot delete the victim's session: 404, and the victim's session is untouched.
  const cross = await del(attacker, 'v');
  expect(cross.status).toBe(404);
  await victimIntact(2);

  // DELETE of the session with a parked run aborts the run first, then removes everything.
  const gone = await del(attacker, 'parked');
  expect(gone.status).toBe(200);
  expect(gone.body).toEqual({ sessionId: 'parked', deleted: true, abortedRuns: [parked.status === 'waiting' ? parked.runId : ''] });
  expect((await attacker.raw('GET', '/v1/sessions/parked')).status).toBe(404);
  expect((await attacker.raw('GET', `/v1/sessions/parked/runs/${parked.status === 'waiting' ? parked.runId : ''}`)).status).toBe(404);

  // DELETE of the filled session gives its space back: the attacker runs again.
  expect((await del(attacker, 'fill-a')).status).toBe(200);
  expect((await del(attacker, 'fill-a')).status).toBe(404);
  expect(await attacker.exec('fill-a', { title: 'after', code: 'return 2' })).toMatchObject({ status: 'completed', value: 2 });
  expect(await attacker.putSession('fill-b', { agentId: 'x' })).toMatchObject({ sessionId: 'fill-b' });
  await victimIntact(3);

  const health = await attacker.raw('GET', '/health/ready');
  expect(health.status).toBe(200);
});

test('a quota filled across many sessions at once is counted whole: every session of the attacker is refused, the victim is untouched', async () => {
  const sessions = Array.from({ length: 8 }, (_, i) => `spread-${i}`);
  let refused = false;
  for (let round = 0; round < 12 && !refused; round++) {
    const results = await Promise.all(sessions.map((sid) => attacker.exec(sid, bigCell)));
    for (const result of results) expect(['completed', 'failed']).toContain(result.status);
    refused = results.some((r) => r.status === 'failed');
    // The sessions written in a round are measured together, within MEASURE_DELAY_MS (200 ms).
    await new Promise((r) => setTimeout(r, 400));
  }
  expect(refused).toBe(true);
  for (const sid of [...sessions, 'spread-fresh']) {
    expect(await attacker.exec(sid, { title: 't', code: 'return 1' })).toMatchObject({ status: 'failed', error: STORAGE_ERROR });
  }
  await victimIntact(4);
  for (const sid of sessions) await del(attacker, sid);
  expect(await attacker.exec('spread-0', { title: 'after', code: 'return 3' })).toMatchObject({ status: 'completed', value: 3 });
});

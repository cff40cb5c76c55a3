import { randomBytes } from 'node:crypto';
import type { CodeModeClient } from '@codemode/client';
import type { CodeModeResult } from '@codemode/contracts';
import { TestStack } from '../utils/test-stack';

jest.setTimeout(180_000);

/**
 * SPEC §10 "Fate isolation", sandbox threads: one tenant (alpha) sends one pathological cell per
 * sandbox thread every second (a native string search QuickJS's interrupt handler cannot stop, so
 * the watchdog must terminate the thread); the other tenant's (beta's) cells, which write the
 * store and wait on a 4 s shell command on those same threads, all complete with their values and
 * writes, never `code mode sandbox thread was terminated; the run was lost.`
 */
const THREADS = 2;
const ATTACK_SECONDS = 12;
/** Beta's cells: a wave of one per thread every 3 s. */
const VICTIMS = THREADS * Math.ceil(ATTACK_SECONDS / 3);
const STUCK = 'const s = "a".repeat(2e7); return s.indexOf("a".repeat(5000) + "b")';
const TIMEOUT = { status: 'failed', code: 'timeout', error: 'code mode timeout exceeded' };
const NOT_STARTED = {
  status: 'failed',
  code: 'runtime_unavailable',
  error: 'no worker started the cell within its budget; it was not run.',
};
/** The API's own deadline, when the worker's answer to a 1 s cell is late (its threads being replaced). */
const NO_ANSWER = {
  status: 'failed',
  code: 'runtime_unavailable',
  error: 'the worker running this cell did not answer within its budget; read GET /v1/sessions/{sid}/runs/{runId} for its outcome.',
};
/** 4 s of shell command plus a few stuck threads' budget + grace and their replacement, on a loaded 2-core machine. */
const LOADED_VICTIM_BOUND_MS = 14_000;
const run = randomBytes(4).toString('hex');
const keys = { alpha: `fa-${run}`, beta: `fb-${run}` };

let stack: TestStack;
let alpha: CodeModeClient;
let beta: CodeModeClient;

beforeAll(async () => {
  stack = await TestStack.start({
    apiKeys: `${keys.alpha}:alpha,${keys.beta}:beta`,
    env: { CODEMODE_SANDBOX_THREADS: String(THREADS), CODEMODE_SHELL_SANDBOX: 'bwrap' },
  });
  alpha = stack.client(keys.alpha);
  beta = stack.client(keys.beta);
  await alpha.putSession('attack', { codeMode: { timeoutMs: 1000 } });
  // Room for the 4 s command and for waiting behind stuck threads and their replacements' start
  // (seconds each on a loaded 2-core machine).
  for (let n = 0; n < VICTIMS; n += 1) await beta.putSession(`v${n}`, { codeMode: { timeoutMs: 30_000 } });
});

afterAll(async () => {
  await stack?.stop();
});

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Beta's cell: a store write, then a 4 s shell command, then its own value. */
function victimCell(n: number) {
  return {
    title: `victim ${n}`,
    code: `await store("k${n}", { n: ${n} }); const r = await exec({ command: "sleep 4; echo v${n}", yieldMs: 8000 }); return { n: ${n}, out: r.details.aggregated.trim() };`,
  };
}

test('a tenant overrunning every thread every second loses none of another tenant’s cells waiting on a shell command', async () => {
  const attacks: Promise<CodeModeResult>[] = [];
  const victims: Promise<CodeModeResult>[] = [];
  const victimMs: number[] = [];
  const started = Date.now();
  for (let second = 0; second < ATTACK_SECONDS; second += 1) {
    // A new wave of beta's cells every 3 s, so some start while a thread is stuck.
    if (second % 3 === 0) {
      for (let i = 0; i < THREADS; i += 1) {
        const sent = Date.now();
        const n = victims.length;
        victims.push(beta.exec(`v${n}`, victimCell(n)).finally(() => (victimMs[n] = Date.now() - sent)));
      }
    }
    await tick(300);
    for (let i = 0; i < THREADS; i += 1) attacks.push(alpha.exec('attack', { title: 'stuck', code: STUCK }));
    await tick(Math.max(0, started + (second + 1) * 1000 - Date.now()));
  }
  const victimResults = await Promise.all(victims);
  process.stdout.write(`victim cells (4 s shell command each), ms: ${JSON.stringify(victimMs)}\n`);
  expect(victimResults).toEqual(victimResults.map((_, n) => expect.objectContaining({ status: 'completed', value: { n, out: `v${n}` } })));
  // The attacker holds at most half the threads' guest time (SPEC §10 thread share): the victim's
  // cells wait for a stuck thread at most a few times, not for the whole attack (16–22 s before).
  expect(Math.max(...victimMs)).toBeLessThan(LOADED_VICTIM_BOUND_MS);
  // The store writes made before the threads were terminated are intact.
  for (let n = 0; n < victims.length; n += 1) {
    expect(await beta.exec(`v${n}`, { title: 'check', code: `return load("k${n}")` })).toMatchObject({ status: 'completed', value: { n } });
  }
  // Every attacking cell fails: `timeout` once it ran; one that found no thread ready within its
  // 1 s budget (every thread stuck or being replaced) was never run, or was answered late by the
  // API's deadline. Threads were terminated.
  const attackResults = await Promise.all(attacks);
  const shapes = attackResults.map((result) =>
    result.status === 'failed' ? { status: result.status, code: result.code, error: result.error } : result,
  );
  for (const shape of shapes) expect([TIMEOUT, NOT_STARTED, NO_ANSWER]).toContainEqual(shape);
  expect(shapes.filter((shape) => shape.status === 'failed' && shape.code === 'timeout').length).toBeGreaterThanOrEqual(THREADS);
  expect(stack.workers[0].logs()).toContain('sandbox thread overran its deadline; terminating it');
  expect(stack.workers[0].logs()).not.toContain('the run was lost');
  // Healthy: both tenants' ordinary cells still run, and the worker is ready.
  expect(await beta.exec('after', { title: 'add', code: 'return 1 + 1' })).toMatchObject({ status: 'completed', value: 2 });
  expect(await alpha.exec('after', { title: 'add', code: 'return 2 + 2' })).toMatchObject({ status: 'completed', value: 4 });
  expect((await fetch(`${stack.workerUrl(stack.workers[0])}/health/ready`)).status).toBe(200);
});

import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeModeResult } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { allEvents } from '../chaos/chaos-helpers';
import { decide, metric, pendingApprovals, putJson } from '../approvals/approval-helpers';
import { stackRedis, TestStack } from '../utils/test-stack';
import { sleep } from './tenancy-helpers';

jest.setTimeout(240_000);

const MiB = 1024 * 1024;
const EVICTED = 'evicted from memory to its image: the worker’s parked slots or parked memory were full';

function runIdOf(result: CodeModeResult): string {
  if (result.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(result)}`);
  return result.runId;
}

/** Each run's `run.released` reasons, by run. */
async function releasedRuns(client: CodeModeClient, sid: string): Promise<string[]> {
  return (await allEvents(client, sid)).filter((e) => e.type === 'run.released' && e.data.reason === EVICTED).map((e) => String(e.runId));
}

/**
 * SPEC §10 "Parked memory", attack 1: the attacker (alpha) parks runs holding big VMs. Its
 * parked bytes count their wasm memory while they are in the worker's memory (not their
 * compressed images), the worker keeps parked VMs within CODEMODE_WORKER_PARKED_MEMORY_BYTES by
 * evicting the attacker's own coldest VMs, the victim (beta) keeps its VMs and its runs finish,
 * and every evicted run resumes from its image with its state.
 */
describe('parked memory: big VMs are counted as held and kept within the worker budget', () => {
  const run = randomBytes(4).toString('hex');
  const keys = { alpha: `pma-${run}`, beta: `pmb-${run}`, gamma: `pmg-${run}` };
  const BUDGET = 160 * MiB;
  let stack: TestStack;
  let redis: ReturnType<typeof stackRedis>;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parked-memory-'));
    const file = join(dir, 'tenants.json');
    writeFileSync(file, JSON.stringify({ gamma: { quotas: { maxParkedBytes: 64 * MiB } } }));
    stack = await TestStack.start({
      apiKeys: `${keys.alpha}:alpha,${keys.beta}:beta,${keys.gamma}:gamma`,
      env: { CODEMODE_WORKER_PARKED_MEMORY_BYTES: String(BUDGET), CODEMODE_TENANTS_FILE: file },
    });
    redis = stackRedis();
  });
  afterAll(async () => {
    redis?.disconnect();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts real memory, stays within the budget, evicts the attacker’s own VMs, and every run finishes', async () => {
    const alpha = stack.client(keys.alpha);
    const beta = stack.client(keys.beta);
    const workerUrl = stack.workerUrl(stack.workers[0]);
    const victimRuns: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      victimRuns.push(
        runIdOf(await beta.exec('v', { title: `v${i}`, code: `const mine = { v: ${i} }; await yield_control(); return mine;` })),
      );
    }
    const attackRuns: string[] = [];
    let highest = 0;
    for (let i = 0; i < 6; i += 1) {
      const code = `const big = new Uint8Array(40 * 1024 * 1024); big[7] = ${i + 1}; await yield_control(); return big.length + big[7];`;
      attackRuns.push(runIdOf(await alpha.exec('a', { title: `a${i}`, code })));
      highest = Math.max(highest, await metric(workerUrl, 'codemode_parked_memory_bytes'));
    }
    // Six ~56 MiB VMs and two small ones held 350+ MiB before; now the worker keeps at most the budget.
    expect(highest).toBeGreaterThan(40 * MiB);
    expect(highest).toBeLessThanOrEqual(BUDGET);
    const evicted = await releasedRuns(alpha, 'a');
    expect(evicted.length).toBeGreaterThanOrEqual(3);
    expect(evicted.every((runId) => attackRuns.includes(runId))).toBe(true);
    expect(await releasedRuns(beta, 'v')).toEqual([]);

    // The quota counts what each run holds: the VMs still in memory by their wasm memory, the
    // evicted ones by their images.
    const counted = await redis.hgetall(`${stack.prefix}:quota:{alpha}:parked-bytes`);
    expect(Object.keys(counted).sort()).toEqual([...attackRuns].sort());
    for (const runId of attackRuns) {
      const bytes = Number(counted[runId]);
      if (evicted.includes(runId)) expect(bytes).toBeLessThan(4 * MiB);
      else expect(bytes).toBeGreaterThan(40 * MiB);
    }

    // The victim's runs finish intact; so does every attacker run, the evicted ones from their images.
    expect(await Promise.all(victimRuns.map((runId) => beta.wait('v', runId)))).toEqual([
      expect.objectContaining({ status: 'completed', value: { v: 0 } }),
      expect.objectContaining({ status: 'completed', value: { v: 1 } }),
    ]);
    const results = await Promise.all(attackRuns.map((runId) => alpha.wait('a', runId)));
    expect(results.map((r) => (r.status === 'completed' ? r.value : r))).toEqual(attackRuns.map((_, i) => 40 * MiB + i + 1));
    const recovered = (await allEvents(alpha, 'a')).filter((e) => e.type === 'run.recovered').map((e) => e.runId);
    expect([...recovered].sort()).toEqual([...evicted].sort());
    // Each place is given back once its run's end is written (ParkedRunHoldings.free, not awaited
    // by the answer): the last may land just after the last answer.
    const placesLeft = () => redis.hlen(`${stack.prefix}:quota:{alpha}:parked-bytes`);
    for (const until = Date.now() + 5_000; (await placesLeft()) > 0 && Date.now() < until;) await sleep(50);
    expect(await placesLeft()).toBe(0);
    expect(await beta.exec('v', { title: 'after', code: 'return 1 + 1' })).toMatchObject({ status: 'completed', value: 2 });
  });

  it('refuses a park whose VM passes the tenant’s parked bytes (its compressed image would not have)', async () => {
    const gamma = stack.client(keys.gamma);
    await gamma.putSession('g', { codeMode: { memoryLimitBytes: 128 * MiB } });
    const code = 'const big = new Uint8Array(80 * 1024 * 1024); await yield_control(); return big.length;';
    expect(await gamma.exec('g', { title: 'big', code })).toMatchObject({
      status: 'failed',
      code: 'runtime_unavailable',
      error: `code mode parked-run bytes quota reached for this tenant (${64 * MiB} bytes of parked runs); wait on or abort a parked run first.`,
    });
    const small = runIdOf(await gamma.exec('g', { title: 'small', code: 'await yield_control(); return "small"' }));
    expect(await gamma.wait('g', small)).toMatchObject({ status: 'completed', value: 'small' });
  });

  it('caps memoryLimitBytes at 256 MiB by default in multi-tenant mode', async () => {
    const alpha = stack.client(keys.alpha);
    const put = await alpha.putSession('ceiling', { codeMode: { memoryLimitBytes: 1024 * MiB } });
    expect(put.codeMode).toMatchObject({ memoryLimitBytes: 256 * MiB });
  });
});

/**
 * SPEC §10 "Parked memory", attack 2: the attacker fills a worker's in-memory parked slots with
 * runs held on approvals (64, its parked-run quota). It holds at most half of them (its own coldest are evicted to their
 * images, which approval-held runs may be), the victim's `yield_control()` still parks and its
 * wait completes, and an evicted approval-held run goes on once approved.
 */
describe('parked memory: approval-held runs of one tenant never take the other tenant’s slots', () => {
  const run = randomBytes(4).toString('hex');
  const keys = { alpha: `psa-${run}`, beta: `psb-${run}` };
  /** Every in-memory slot of the worker, and the attacker's whole parked-run quota. */
  const HELD = 64;
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: `${keys.alpha}:alpha,${keys.beta}:beta`, env: { CODEMODE_SHELL_SANDBOX: 'bwrap' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('the victim parks and completes while the attacker holds 64 approval-held runs (all of a worker’s slots before)', async () => {
    const alpha = stack.client(keys.alpha);
    const beta = stack.client(keys.beta);
    mkdirSync(join(stack.workspaceRoot, 'alpha', 'held'), { recursive: true });
    const policy = { rules: [{ tool: 'exec', decision: 'approve' }] };
    expect((await putJson(alpha, 'PUT', '/v1/sessions/held', { policy })).status).toBe(200);
    const held: string[] = [];
    for (let i = 0; i < HELD; i += 1) {
      const code = `const p = exec({ command: "echo approved-${i}" }); await yield_control(); return JSON.stringify(await p).includes("approved-${i}");`;
      held.push(runIdOf(await alpha.exec('held', { title: `h${i}`, code })));
      // Held, not just parked: its approval is recorded (all it waits on is Redis).
      await pendingApprovals(alpha, 'held', i + 1);
    }
    const evicted = await releasedRuns(alpha, 'held');
    expect(evicted.length).toBeGreaterThanOrEqual(HELD - 32);

    const victim: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      victim.push(runIdOf(await beta.exec('v', { title: `y${i}`, code: `await yield_control(); return "victim-${i}";` })));
    }
    expect(await Promise.all(victim.map((runId) => beta.wait('v', runId)))).toEqual(
      victim.map((_, i) => expect.objectContaining({ status: 'completed', value: `victim-${i}` })),
    );
    expect(await releasedRuns(beta, 'v')).toEqual([]);

    // An evicted approval-held run, once approved, is restored from its image and its call made.
    const approvals = await pendingApprovals(alpha, 'held', HELD);
    const first = approvals.find((a) => a.runId === evicted[0]);
    expect(first).toBeDefined();
    expect((await decide(alpha, 'held', first!.approvalId, { decision: 'approve' })).status).toBe(200);
    expect(await alpha.wait('held', evicted[0])).toMatchObject({ status: 'completed', value: true });
    const last = approvals.find((a) => a.runId === held[HELD - 1]);
    expect((await decide(alpha, 'held', last!.approvalId, { decision: 'approve' })).status).toBe(200);
    expect(await alpha.wait('held', held[HELD - 1])).toMatchObject({ status: 'completed', value: true });
  });
});

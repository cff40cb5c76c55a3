import { randomBytes } from 'node:crypto';
import { CodeModeApiError, type CodeModeClient } from '@codemode/client';
import { TestStack } from '../utils/test-stack';

/**
 * The operator listings behind the console: `GET /v1/sessions`, `GET /v1/sessions/{sid}/runs` and
 * `GET /v1/fleet`, on a real api and worker with two tenants. Tenant beta must never see alpha's
 * sessions, runs, or live runs on the fleet.
 */
const run = randomBytes(4).toString('hex');
const KEY_ALPHA = `ka-${run}`;
const KEY_BETA = `kb-${run}`;

let stack: TestStack;
let alpha: CodeModeClient;
let beta: CodeModeClient;
let parkedRunId: string;

beforeAll(async () => {
  stack = await TestStack.start({
    apiKeys: `${KEY_ALPHA}:alpha,${KEY_BETA}:beta`,
    env: { CODEMODE_SHELL_SANDBOX: 'none', CODEMODE_TENANCY: 'single' },
  });
  alpha = stack.client(KEY_ALPHA);
  beta = stack.client(KEY_BETA);
  await alpha.putSession('list-old', { agentId: 'agent-old' });
  expect(await alpha.exec('list-old', { title: 'two', code: 'return 1 + 1' })).toMatchObject({ status: 'completed', value: 2 });
  const parked = await alpha.exec('list-new', { title: 'pause here', code: 'await yield_control(); return 3' });
  if (parked.status !== 'waiting') throw new Error(`expected a parked run, got ${JSON.stringify(parked)}`);
  parkedRunId = parked.runId;
  await beta.exec('beta-only', { title: 'beta', code: 'return "b"' });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

async function status(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (error) {
    if (error instanceof CodeModeApiError) return error.status;
    throw error;
  }
}

describe('GET /v1/sessions', () => {
  it("lists the tenant's sessions newest activity first, with live run counts", async () => {
    const page = await alpha.listSessions();
    expect(page.sessions.map((s) => s.sessionId)).toEqual(['list-new', 'list-old']);
    expect(page.sessions[0]).toMatchObject({ agentId: null, runs: { running: 0, parked: 1 } });
    expect(page.sessions[1]).toMatchObject({ agentId: 'agent-old', runs: { running: 0, parked: 0 } });
    expect(page.next).toBeNull();
  });

  it('pages with limit and the opaque cursor, each session once', async () => {
    const first = await alpha.listSessions({ limit: 1 });
    expect(first.sessions.map((s) => s.sessionId)).toEqual(['list-new']);
    expect(first.next).toEqual(expect.any(String));
    const second = await alpha.listSessions({ limit: 1, cursor: first.next! });
    expect(second.sessions.map((s) => s.sessionId)).toEqual(['list-old']);
    expect(second.next).toBeNull();
  });

  it('moves a session to the top when it is written again', async () => {
    await alpha.exec('list-old', { title: 'again', code: 'return 0' });
    expect((await alpha.listSessions()).sessions.map((s) => s.sessionId)).toEqual(['list-old', 'list-new']);
  });

  it('refuses a bad limit or cursor with 400 naming the field', async () => {
    const bad = await alpha.raw('GET', '/v1/sessions?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_input', details: { field: 'limit' } });
    const cursor = await alpha.raw('GET', '/v1/sessions?cursor=not-a-cursor');
    expect(cursor.status).toBe(400);
    expect(cursor.body).toMatchObject({ code: 'invalid_input', error: 'cursor must be the `next` of a previous page' });
  });

  it("never shows another tenant's sessions", async () => {
    expect((await beta.listSessions()).sessions.map((s) => s.sessionId)).toEqual(['beta-only']);
  });

  it('needs a key', async () => {
    expect((await stack.client().raw('GET', '/v1/sessions')).status).toBe(401);
  });
});

describe('GET /v1/sessions/{sid}/runs', () => {
  it('lists the runs newest request first with title, status, times and owner', async () => {
    const page = await alpha.listRuns('list-old');
    expect(page.runs.map((r) => [r.title, r.status, r.replaySafe])).toEqual([
      ['again', 'completed', false],
      ['two', 'completed', false],
    ]);
    expect(page.runs[0]).toMatchObject({ sessionId: 'list-old', owner: expect.any(String), endedAt: expect.any(String) });
    expect(page.runs[0]).not.toHaveProperty('lastResult');
    const parked = await alpha.listRuns('list-new');
    expect(parked.runs).toEqual([expect.objectContaining({ runId: parkedRunId, title: 'pause here', status: 'waiting', endedAt: null })]);
  });

  it('pages with limit and cursor', async () => {
    const first = await alpha.listRuns('list-old', { limit: 1 });
    expect(first.runs.map((r) => r.title)).toEqual(['again']);
    const second = await alpha.listRuns('list-old', { limit: 1, cursor: first.next! });
    expect(second.runs.map((r) => r.title)).toEqual(['two']);
    expect(second.next).toBeNull();
  });

  it('answers 404 for a session of another tenant, as for one never written', async () => {
    expect(await status(beta.listRuns('list-old'))).toBe(404);
    expect(await status(alpha.listRuns('never-written'))).toBe(404);
  });
});

describe('GET /v1/fleet', () => {
  it("shows the live worker with its report and the tenant's parked run on it", async () => {
    // Workers report every quarter lease (2.5 s here): wait for a report made after the park.
    let fleet = await alpha.fleet();
    for (let i = 0; i < 40 && (fleet.workers[0]?.report?.parkedRuns ?? 0) < 1; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      fleet = await alpha.fleet();
    }
    expect(fleet.workers).toHaveLength(1);
    const [worker] = fleet.workers;
    expect(worker.report).toMatchObject({ threads: 2, startedAt: expect.any(String) });
    expect(worker.report!.parkedRuns).toBeGreaterThanOrEqual(1);
    expect(worker.leaseAgeMs).toBeGreaterThanOrEqual(0);
    expect(worker.runs.parked).toEqual([{ sessionId: 'list-new', runId: parkedRunId, title: 'pause here', status: 'waiting' }]);
    // Single mode (this stack) shows occupancy beside the capacity, as before SPEC §10's multi-mode rule.
    expect(worker.report).toMatchObject({ busyThreads: expect.any(Number), cellSlots: 16, parkedSlots: 64 });
    expect(fleet.capacity).toEqual({ workers: 1, threads: 2, cellSlots: 16, parkedSlots: 64 });
    expect(fleet.queue).toMatchObject({ waiting: 0, delayed: 0 });
    expect(fleet.unheld).toEqual([]);
  });

  it("never shows another tenant's runs", async () => {
    const fleet = await beta.fleet();
    expect(fleet.workers).toHaveLength(1);
    expect(fleet.workers[0].runs).toEqual({ running: [], parked: [] });
    expect(JSON.stringify(fleet)).not.toContain(parkedRunId);
    expect(JSON.stringify(fleet)).not.toContain('list-new');
  });
});

import type { CodeModeClient } from '@codemode/client';
import type { Event } from '@codemode/contracts';
import { TestStack } from './utils/test-stack';

jest.setTimeout(180_000);

/**
 * SPEC §15 over REST with the real api and worker: skills (the tenant's and a session's, the
 * session's shadowing the tenant's), their limits, roles and tenancy; `agents.run` as a
 * platform-answered call; both under the session's tool policy.
 */
const OPERATOR_KEY = 'skills-alpha-operator';
const AGENT_KEY = 'skills-alpha-agent';
const BETA_KEY = 'skills-beta-operator';
const API_KEYS = [`${OPERATOR_KEY}:alpha`, `${AGENT_KEY}:alpha:agent`, `${BETA_KEY}:beta`].join(',');
const KIB = 1024;

describe('skills and agents (SPEC §15)', () => {
  let stack: TestStack;
  let alpha: CodeModeClient;
  let agent: CodeModeClient;
  let beta: CodeModeClient;

  beforeAll(async () => {
    // The count cap's race sends hundreds of PUTs: above the tenant's request rate (SPEC §10).
    stack = await TestStack.start({ apiKeys: API_KEYS, env: { CODEMODE_TENANT_RATE: '100000' } });
    alpha = stack.client(OPERATOR_KEY);
    agent = stack.client(AGENT_KEY);
    beta = stack.client(BETA_KEY);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const send = (client: CodeModeClient, method: string, path: string, body?: unknown) =>
    client.raw(method, path, body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const run = async (client: CodeModeClient, sid: string, code: string, extra: Record<string, unknown> = {}) =>
    client.exec(sid, { title: 'skills', code, ...extra });

  it('stores tenant and session skills; the session shadows the tenant; another tenant sees none', async () => {
    const put = await send(alpha, 'PUT', '/v1/skills/deploy', { description: 'How we deploy', content: '# Deploy\nShip it.' });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ name: 'deploy', description: 'How we deploy', content: '# Deploy\nShip it.' });
    await send(alpha, 'PUT', '/v1/skills/review', { description: 'Code review', content: 'Read the diff.' });
    expect((await send(alpha, 'GET', '/v1/skills')).body).toEqual({
      skills: [
        { name: 'deploy', description: 'How we deploy' },
        { name: 'review', description: 'Code review' },
      ],
    });

    const session = await send(alpha, 'PUT', '/v1/sessions/sk-1/skills', {
      skills: [
        { name: 'review', description: 'Our review', content: 'Session review.' },
        { name: 'alpha-notes', description: 'Notes', content: 'n' },
      ],
    });
    expect(session.status).toBe(200);
    expect(session.body).toEqual({
      skills: [
        { name: 'review', description: 'Our review' },
        { name: 'alpha-notes', description: 'Notes' },
      ],
    });

    const listed = await run(alpha, 'sk-1', 'return [await skills.list(), await skills.read("review"), await skills.read("deploy")];');
    expect(listed).toMatchObject({
      status: 'completed',
      value: [
        [
          { name: 'alpha-notes', description: 'Notes' },
          { name: 'deploy', description: 'How we deploy' },
          { name: 'review', description: 'Our review' },
        ],
        { name: 'review', description: 'Our review', content: 'Session review.' },
        { name: 'deploy', description: 'How we deploy', content: '# Deploy\nShip it.' },
      ],
    });
    expect((listed as { telemetry: { callCount: number; catalogSize: number } }).telemetry.callCount).toBe(3);

    const unknown = await run(alpha, 'sk-1', 'try { await skills.read("x"); } catch (e) { return e.message; }');
    expect(unknown).toMatchObject({ status: 'completed', value: 'unknown skill: x' });

    // Another tenant: none of alpha's skills, tenant's or session's of the same id.
    expect((await send(beta, 'GET', '/v1/skills')).body).toEqual({ skills: [] });
    const other = await run(beta, 'sk-1', 'return [await skills.list(), await skills.read("deploy").catch((e) => e.message)];');
    expect(other).toMatchObject({ status: 'completed', value: [[], 'unknown skill: deploy'] });

    // Deleting a session removes its skills; the tenant's stay.
    expect((await send(alpha, 'DELETE', '/v1/sessions/sk-1')).status).toBe(200);
    const after = await run(alpha, 'sk-1', 'return (await skills.read("review")).content;');
    expect(after).toMatchObject({ status: 'completed', value: 'Read the diff.' });

    expect((await send(alpha, 'DELETE', '/v1/skills/review')).body).toEqual({ name: 'review', deleted: true });
    expect((await send(alpha, 'DELETE', '/v1/skills/review')).body).toEqual({ error: 'skill review not found.', code: 'not_found' });
  });

  it("refuses an agent key's tenant writes, bad names and oversized skills with errors naming the field", async () => {
    const forbidden = {
      code: 'forbidden',
      error: "this API key has the agent role; an operator key is needed to change the tenant's skills.",
    };
    const agentPut = await send(agent, 'PUT', '/v1/skills/mine', { description: 'd', content: 'c' });
    expect([agentPut.status, agentPut.body]).toEqual([403, forbidden]);
    const agentDelete = await send(agent, 'DELETE', '/v1/skills/deploy');
    expect([agentDelete.status, agentDelete.body]).toEqual([403, forbidden]);
    // Any role reads the tenant's list and sets a session's skills.
    expect((await send(agent, 'GET', '/v1/skills')).status).toBe(200);
    expect((await send(agent, 'PUT', '/v1/sessions/sk-agent/skills', { skills: [] })).status).toBe(200);

    const nameRule = 'skill name must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-", and not "." or ".."';
    const badName = await send(alpha, 'PUT', '/v1/skills/bad%20name', { description: 'd', content: 'c' });
    expect([badName.status, badName.body]).toEqual([
      400,
      { error: `name: ${nameRule}.`, code: 'invalid_input', details: { field: 'name' } },
    ]);
    const dots = await send(alpha, 'PUT', '/v1/sessions/sk-2/skills', { skills: [{ name: '..', description: 'd', content: 'c' }] });
    expect([dots.status, dots.body]).toEqual([
      400,
      { error: `skills.0.name: ${nameRule}`, code: 'invalid_input', details: { field: 'skills.0.name' } },
    ]);

    const tooLarge = 'skill exceeds 256 KiB (UTF-8 bytes of description and content)';
    // Exactly 256 KiB of description and content is stored; one byte more is not ("é" is 2 bytes).
    const exact = await send(alpha, 'PUT', '/v1/skills/big', { description: 'dd', content: 'é'.repeat(128 * KIB - 1) });
    expect(exact.status).toBe(200);
    const over = await send(alpha, 'PUT', '/v1/skills/big', { description: 'ddd', content: 'é'.repeat(128 * KIB - 1) });
    expect([over.status, over.body]).toEqual([
      400,
      { error: `content: ${tooLarge}`, code: 'invalid_input', details: { field: 'content' } },
    ]);
    const sessionOver = await send(alpha, 'PUT', '/v1/sessions/sk-2/skills', {
      skills: [
        { name: 'a', description: '', content: 'a' },
        { name: 'b', description: '', content: 'b'.repeat(256 * KIB + 1) },
      ],
    });
    expect([sessionOver.status, sessionOver.body]).toEqual([
      400,
      { error: `skills.1.content: ${tooLarge}`, code: 'invalid_input', details: { field: 'skills.1.content' } },
    ]);
    // A set past the inline size is checked on a body thread and stored as sent.
    const big = Array.from({ length: 3 }, (_, i) => ({ name: `big-${i}`, description: 'big', content: `${i}`.repeat(200 * KIB) }));
    expect((await send(alpha, 'PUT', '/v1/sessions/sk-big/skills', { skills: big })).status).toBe(200);
    const read = await run(alpha, 'sk-big', 'const s = await skills.read("big-2"); return [s.content.length, s.content[0]];');
    expect(read).toMatchObject({ status: 'completed', value: [200 * KIB, '2'] });
    const duplicate = await send(alpha, 'PUT', '/v1/sessions/sk-2/skills', {
      skills: [
        { name: 'a', description: '', content: 'a' },
        { name: 'a', description: '', content: 'b' },
      ],
    });
    expect(duplicate.body).toEqual({
      error: 'skills.1.name: duplicate skill name a',
      code: 'invalid_input',
      details: { field: 'skills.1.name' },
    });
    const many = Array.from({ length: 257 }, (_, i) => ({ name: `s${i}`, description: '', content: '' }));
    const tooMany = await send(alpha, 'PUT', '/v1/sessions/sk-2/skills', { skills: many });
    expect(tooMany.body).toEqual({ error: 'skills: at most 256 skills', code: 'invalid_input', details: { field: 'skills' } });
    const missing = await send(alpha, 'PUT', '/v1/skills/x', { description: 'd' });
    expect(missing.status).toBe(400);
    expect((missing.body as { details: unknown }).details).toEqual({ field: 'content' });
  });

  it('holds a tenant at 256 skills even under concurrent PUTs', async () => {
    // Beta has none: fill it to 250, then race 20 new names at once; exactly 6 are stored.
    for (let i = 0; i < 250; i += 25) {
      const fills = await Promise.all(
        Array.from({ length: 25 }, (_, j) => send(beta, 'PUT', `/v1/skills/fill-${i + j}`, { description: '', content: 'x' })),
      );
      expect(fills.map((res) => res.status)).toEqual(Array(25).fill(200));
    }
    const raced = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(beta, 'PUT', `/v1/skills/race-${i}`, { description: '', content: 'x' })),
    );
    expect(raced.filter((res) => res.status === 200)).toHaveLength(6);
    const refused = raced.find((res) => res.status === 400);
    expect(refused?.body).toEqual({
      error: 'name: the tenant has 256 skills, the most it may register; delete one first.',
      code: 'invalid_input',
      details: { field: 'name', limit: 256 },
    });
    expect(((await send(beta, 'GET', '/v1/skills')).body as { skills: unknown[] }).skills).toHaveLength(256);
    // Replacing one it has is still allowed.
    expect((await send(beta, 'PUT', '/v1/skills/fill-0', { description: 'new', content: 'y' })).status).toBe(200);
  });

  it('puts skills.read under the tool policy, and declares the surfaces in API files', async () => {
    await send(alpha, 'PUT', '/v1/sessions/sk-policy', { policy: { rules: [{ tool: 'skills.read', decision: 'deny' }] } });
    const denied = await run(
      alpha,
      'sk-policy',
      'await skills.list(); try { await skills.read("deploy"); } catch (e) { return e.message; }',
    );
    expect(denied).toMatchObject({ status: 'completed', value: 'code mode tool skills.read is blocked by policy.' });
    const events = (await alpha.events('sk-policy', { limit: 100 })).events;
    expect(events.filter((e) => e.type === 'tool.called').map((e) => e.data)).toEqual([
      expect.objectContaining({ tool: 'skills.list', source: 'platform' }),
    ]);
    expect(events.find((e) => e.type === 'tool.blocked')?.data).toMatchObject({ tool: 'skills.read' });

    const api = await run(
      alpha,
      'sk-policy',
      'const files = (await API.list()).files.map((f) => f.path); const s = await API.read("skills.d.ts"); const n = await API.read("nodes.d.ts");' +
        'return [files.includes("skills.d.ts"), files.includes("nodes.d.ts"), files.includes("agents.d.ts"), s.content.includes("declare const skills"), n.content.includes("invoke(command: string, params?: unknown)"), await API.read("agents.d.ts").catch((e) => e.message)];',
    );
    expect(api).toMatchObject({
      status: 'completed',
      value: [true, true, false, true, true, 'Unknown API file: agents.d.ts. Use API.list() to see the available files.'],
    });

    // A restartSafe cell may read skills (replay-safe); agents.run is not there at all.
    const safe = await run(alpha, 'sk-safe', 'return (await skills.list()).length > 0;', { restartSafe: true });
    expect(safe).toMatchObject({ status: 'completed', value: true });
  });

  it('agents is defined only in sessions with agents: true, shown by the session', async () => {
    const without = await run(alpha, 'sk-agents', 'return typeof agents;');
    expect(without).toMatchObject({ status: 'completed', value: 'undefined' });
    const reference = await run(alpha, 'sk-agents', 'return agents.run({});');
    expect(reference).toMatchObject({ status: 'failed', error: expect.stringContaining("ReferenceError: 'agents' is not defined") });

    const config = await alpha.putSession('sk-agents', { agents: true });
    expect(config.agents).toBe(true);
    expect((await alpha.getSession('sk-agents')).agents).toBe(true);
    expect((await alpha.getSession('sk-policy')).agents).toBe(false);
  }, 30_000);

  it('agents.run is pending until the platform answers it through tool-results', async () => {
    const waiting = await run(alpha, 'sk-agents', 'const answer = await agents.run({task: "summarize"}); return {answer};');
    expect(waiting).toMatchObject({
      status: 'waiting',
      reason: 'pending_tools',
      pendingToolCalls: [{ id: 'bridge:callValue:1', method: 'callValue', tool: 'agents.run', input: { task: 'summarize' } }],
    });
    const runId = (waiting as { runId: string }).runId;
    const called = (await alpha.events('sk-agents', { limit: 100 })).events.find((e) => e.type === 'tool.called');
    expect(called?.data).toMatchObject({ tool: 'agents.run', source: 'platform', answeredBy: 'platform' });
    await alpha.toolResults('sk-agents', runId, [{ id: 'bridge:callValue:1', ok: true, value: { summary: 'done' } }]);
    expect(await alpha.wait('sk-agents', runId)).toMatchObject({ status: 'completed', value: { answer: { summary: 'done' } } });
  }, 30_000);

  it('agents.run keeps an awaitResults cell in flight until the platform answers it; restartSafe cells may not call it', async () => {
    await alpha.putSession('sk-await', { agents: true });
    const inFlight = run(
      alpha,
      'sk-await',
      'const [a, b] = await Promise.all([agents.run({n: 1}), agents.run({n: 2}).catch((e) => e.message)]); return {a, b};',
      {
        awaitResults: true,
      },
    );
    // The platform learns of the calls from the event stream.
    const called = await pollEvents(alpha, 'sk-await', (events) => {
      const mine = events.filter((e) => e.type === 'tool.called' && e.data.tool === 'agents.run' && e.data.answeredBy === 'platform');
      return mine.length >= 2 ? mine : null;
    });
    const runId = called[0].runId!;
    expect(called.map((e) => e.data.callId)).toEqual(['bridge:callValue:1', 'bridge:callValue:2']);
    expect((await alpha.getRun('sk-await', runId)).status).toBe('running');
    await alpha.toolResults('sk-await', runId, [{ id: 'bridge:callValue:1', ok: true, value: 'one' }]);
    await alpha.toolResults('sk-await', runId, [{ id: 'bridge:callValue:2', ok: false, error: 'agent failed' }]);
    expect(await inFlight).toMatchObject({ status: 'completed', value: { a: 'one', b: 'agent failed' } });
    const again = await send(alpha, 'POST', `/v1/sessions/sk-await/runs/${runId}/tool-results`, {
      results: [{ id: 'bridge:callValue:1', ok: true }],
    });
    expect(again.status).toBe(409);

    const restartSafe = await run(alpha, 'sk-await', 'return agents.run({});', { restartSafe: true });
    expect(restartSafe).toMatchObject({ status: 'failed', code: 'invalid_input' });
  }, 30_000);

  it('agents.run under an approve rule waits for the operator, then for the platform', async () => {
    // Approve rule: the call waits for an operator, then goes to the platform like any agents.run.
    await send(alpha, 'PUT', '/v1/sessions/sk-agents', { policy: { rules: [{ tool: 'agents.*', decision: 'approve' }] } });
    // The exec stays open while the call waits for its approval (SPEC §11: the budget clock stops).
    const held = run(alpha, 'sk-agents', 'return await agents.run({n: 1});');
    const approvals = await pollApprovals(alpha, 'sk-agents');
    expect(approvals[0]).toMatchObject({ tool: 'agents.run', input: { n: 1 } });
    expect((await send(alpha, 'POST', `/v1/sessions/sk-agents/approvals/${approvals[0].approvalId}`, { decision: 'approve' })).status).toBe(
      200,
    );
    const parked = await held;
    expect(parked).toMatchObject({ status: 'waiting', pendingToolCalls: [{ tool: 'agents.run', input: { n: 1 } }] });
    const heldRun = (parked as { runId: string }).runId;
    await alpha.toolResults('sk-agents', heldRun, [{ id: 'bridge:callValue:1', ok: true, value: 7 }]);
    expect(await alpha.wait('sk-agents', heldRun)).toMatchObject({ status: 'completed', value: 7 });
  }, 30_000);

  /** The session's events once `found` picks something out of them. */
  async function pollEvents<T>(client: CodeModeClient, sid: string, found: (events: Event[]) => T | null): Promise<T> {
    for (let i = 0; i < 200; i += 1) {
      const hit = found((await client.events(sid, { limit: 1000 })).events);
      if (hit !== null) return hit;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`session ${sid} did not log the events looked for`);
  }

  /** The session's pending approvals, once there is one. */
  async function pollApprovals(client: CodeModeClient, sid: string): Promise<{ approvalId: string; tool: string; input: unknown }[]> {
    for (let i = 0; i < 200; i += 1) {
      const res = await client.raw('GET', `/v1/sessions/${sid}/approvals`);
      const approvals =
        res.status === 200 ? (res.body as { approvals: { approvalId: string; tool: string; input: unknown }[] }).approvals : [];
      if (approvals.length > 0) return approvals;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`session ${sid} listed no pending approval`);
  }
});

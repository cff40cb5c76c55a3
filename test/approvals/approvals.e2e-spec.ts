import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { verifyWebhookSignature } from '@codemode/tools';
import type { ApprovalView, TenantApprovalView } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from '../utils/test-stack';
import {
  AGENT_KEY,
  API_KEYS,
  APPROVAL_ID,
  decide,
  eventsOf,
  expectStatus,
  metric,
  OPERATOR_KEY,
  pendingApprovals,
  putJson,
  RecordingServer,
  sleep,
  TENANT,
} from './approval-helpers';

jest.setTimeout(120_000);

const SECRET = 'approvals-webhook-secret';
const BUDGET_MS = 1000;
const approveLs = { rules: [{ tool: 'ls', decision: 'approve' }] };

describe('tool policy and approvals (SPEC §11)', () => {
  let stack: TestStack;
  let operator: CodeModeClient;
  let agent: CodeModeClient;
  let notified: RecordingServer;
  let tool: RecordingServer;
  let workerUrl: string;

  beforeAll(async () => {
    notified = await RecordingServer.start();
    tool = await RecordingServer.start(() => ({ charged: true }));
    stack = await TestStack.start({
      apiKeys: API_KEYS,
      env: {
        CODEMODE_WEBHOOK_ALLOW: '127.0.0.1',
        CODEMODE_WEBHOOK_SECRETS: `${TENANT}:${SECRET}`,
        CODEMODE_APPROVAL_WEBHOOK: `${notified.url}/approvals`,
      },
    });
    operator = stack.client(OPERATOR_KEY);
    agent = stack.client(AGENT_KEY);
    workerUrl = stack.workerUrl(stack.workers[0]);
  });
  afterAll(async () => {
    await stack?.stop();
    await notified?.close();
    await tool?.close();
  });

  /** A session whose cells have a 1 s budget, under `policy`. */
  async function session(sid: string, policy: unknown): Promise<void> {
    // `ls` lists the session's workspace: it must exist.
    mkdirSync(join(stack.workspaceRoot, TENANT, sid), { recursive: true });
    const res = await putJson(operator, 'PUT', `/v1/sessions/${sid}`, { codeMode: { timeoutMs: BUDGET_MS }, policy });
    expect(res.status).toBe(200);
    expect((res.body as { policy: unknown }).policy).toEqual(policy);
  }

  it('stores the tenant policy, and a deny rule blocks the call with the exact message and tool.blocked', async () => {
    const policy = { rules: [{ tool: 'ls', decision: 'deny' }], default: 'allow' };
    expect((await operator.raw('GET', '/v1/policy')).body).toEqual({ rules: [] });
    const put = await putJson(operator, 'PUT', '/v1/policy', policy);
    expect(put.status).toBe(200);
    expect(put.body).toEqual(policy);
    expect((await agent.raw('GET', '/v1/policy')).body).toEqual(policy);
    const before = await metric(workerUrl, 'codemode_tool_calls_blocked_total');

    mkdirSync(join(stack.workspaceRoot, TENANT, 'tenant-deny'), { recursive: true });
    const result = await operator.exec('tenant-deny', {
      title: 'deny',
      code: 'try { await ls({}); return "called"; } catch (e) { return e.message; }',
    });
    expect(expectStatus(result, 'completed').value).toBe('code mode tool ls is blocked by policy.');
    const events = await eventsOf(operator, 'tenant-deny');
    expect(events.filter((e) => e.type.startsWith('tool.')).map((e) => [e.type, e.data])).toEqual([
      ['tool.blocked', { callId: 'bridge:callValue:1', tool: 'ls' }],
    ]);
    expect(await metric(workerUrl, 'codemode_tool_calls_blocked_total')).toBe(before + 1);
    // A session rule of the same specificity comes later and wins.
    await session('tenant-deny-override', { rules: [{ tool: 'ls', decision: 'allow' }] });
    const allowed = await operator.exec('tenant-deny-override', { title: 'allow', code: 'return Array.isArray((await ls({})).entries);' });
    expect(allowed).toMatchObject({ status: 'completed', value: true });
    expect((await putJson(operator, 'PUT', '/v1/policy', { rules: [] })).status).toBe(200);
  });

  it('applies a policy changed while a run is parked to its calls after the next wait', async () => {
    await session('policy-change', { rules: [] });
    const parked = await operator.exec('policy-change', {
      title: 'park, then list',
      code: 'await yield_control(); try { await ls({}); return "called"; } catch (e) { return e.message; }',
    });
    const { runId } = expectStatus(parked, 'waiting');
    expect(
      (await putJson(operator, 'PUT', '/v1/sessions/policy-change', { policy: { rules: [{ tool: 'ls', decision: 'deny' }] } })).status,
    ).toBe(200);
    const resumed = await operator.wait('policy-change', runId);
    expect(expectStatus(resumed, 'completed').value).toBe('code mode tool ls is blocked by policy.');
  });

  it('refuses policy changes and decisions to agent keys (403 forbidden), and bad policies (400)', async () => {
    const put = await putJson(agent, 'PUT', '/v1/policy', { rules: [] });
    expect(put.status).toBe(403);
    expect(put.body).toEqual({ error: expect.any(String), code: 'forbidden' });
    const sessionPut = await putJson(agent, 'PUT', '/v1/sessions/agent-s', { policy: { rules: [] } });
    expect(sessionPut.status).toBe(403);
    expect(sessionPut.body).toMatchObject({ code: 'forbidden' });
    // The agent may configure everything else.
    expect((await putJson(agent, 'PUT', '/v1/sessions/agent-s', { codeMode: { timeoutMs: BUDGET_MS } })).status).toBe(200);
    const decision = await decide(agent, 'agent-s', 'ap_00000000-0000-4000-8000-000000000000', { decision: 'approve' });
    expect(decision.status).toBe(403);
    expect(decision.body).toMatchObject({ code: 'forbidden' });
    const bad = await putJson(operator, 'PUT', '/v1/policy', { rules: [{ tool: 'ls', decision: 'maybe' }] });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_input', details: { field: 'rules.0.decision' } });
  });

  it('approves after longer than the whole budget: the clock stops while only the approval is pending', async () => {
    const sid = 'approve';
    await session(sid, approveLs);
    const approvedBefore = await metric(workerUrl, 'codemode_approvals_total{decision="approve"}');
    const started = Date.now();
    const exec = operator.exec(sid, {
      title: 'approve',
      code: 'const spin = Date.now() + 300; while (Date.now() < spin) {} const r = await ls({}); return Array.isArray(r.entries);',
    });
    const [approval] = await pendingApprovals(operator, sid);
    expect(approval).toEqual({
      approvalId: expect.stringMatching(APPROVAL_ID),
      runId: expect.stringMatching(/^cm_/),
      callId: 'bridge:callValue:1',
      tool: 'ls',
      input: {},
      requestedAt: expect.any(String),
    } satisfies Record<Exclude<keyof ApprovalView, 'endpoint'>, unknown>);
    const tenantWide = (await agent.raw('GET', '/v1/approvals')).body as { approvals: TenantApprovalView[] };
    expect(tenantWide.approvals).toContainEqual({ ...approval, sessionId: sid });
    expect(await metric(workerUrl, 'codemode_approvals_pending')).toBe(1);

    await sleep(2 * BUDGET_MS + 500);
    const decided = await decide(operator, sid, approval.approvalId, { decision: 'approve' });
    expect(decided.status).toBe(200);
    expect(await exec).toMatchObject({ status: 'completed', value: true });
    expect(Date.now() - started).toBeGreaterThan(2 * BUDGET_MS + 500);

    expect((await decide(operator, sid, approval.approvalId, { decision: 'deny' })).status).toBe(409);
    expect((await decide(operator, sid, 'ap_00000000-0000-4000-8000-000000000000', { decision: 'deny' })).status).toBe(404);
    expect((await decide(operator, 'no-such-session', approval.approvalId, { decision: 'deny' })).status).toBe(404);
    expect((await operator.raw('GET', `/v1/sessions/${sid}/approvals`)).body).toEqual({ approvals: [] });
    expect(await metric(workerUrl, 'codemode_approvals_pending')).toBe(0);
    expect(await metric(workerUrl, 'codemode_approvals_total{decision="approve"}')).toBe(approvedBefore + 1);

    const events = await eventsOf(operator, sid);
    const types = events.map((e) => e.type);
    expect(types.indexOf('approval.requested')).toBeLessThan(types.indexOf('approval.decided'));
    expect(types.indexOf('approval.decided')).toBeLessThan(types.indexOf('tool.called'));
    expect(events.find((e) => e.type === 'approval.requested')?.data).toEqual({
      approvalId: approval.approvalId,
      runId: approval.runId,
      callId: 'bridge:callValue:1',
      tool: 'ls',
      input: {},
    });
    expect(events.find((e) => e.type === 'approval.decided')?.data).toMatchObject({ approvalId: approval.approvalId, decision: 'approve' });

    const notice = notified.requests.find((r) => r.body.includes(approval.approvalId));
    expect(notice?.url).toBe('/approvals');
    expect(JSON.parse(notice!.body)).toEqual({ type: 'approval.requested', tenant: TENANT, sessionId: sid, ...approval });
    expect(
      verifyWebhookSignature({
        secret: SECRET,
        body: notice!.body,
        timestamp: notice!.headers['x-codemode-timestamp'] as string,
        signature: notice!.headers['x-codemode-signature'] as string,
      }),
    ).toBe(true);
  });

  it.each([
    ['reason', { decision: 'deny', reason: 'not on a Friday' }, 'code mode tool ls was denied: not on a Friday'],
    ['bare', { decision: 'deny' }, 'code mode tool ls was denied: no reason given'],
  ])('denies (%s): the call is never dispatched and rejects with the exact message', async (kind, body, message) => {
    const sid = `deny-${kind}`;
    await session(sid, approveLs);
    const deniedBefore = await metric(workerUrl, 'codemode_approvals_total{decision="deny"}');
    const exec = operator.exec(sid, { title: 'deny', code: 'try { await ls({}); return "called"; } catch (e) { return e.message; }' });
    const [approval] = await pendingApprovals(operator, sid);
    expect((await decide(operator, sid, approval.approvalId, body)).status).toBe(200);
    expect(await exec).toMatchObject({ status: 'completed', value: message });
    const types = (await eventsOf(operator, sid)).map((e) => e.type);
    expect(types).toContain('approval.decided');
    expect(types).not.toContain('tool.called');
    expect(await metric(workerUrl, 'codemode_approvals_total{decision="deny"}')).toBe(deniedBefore + 1);
  });

  it('keeps sibling calls running and pauses only once they settled', async () => {
    const sid = 'siblings';
    await session(sid, { rules: [{ tool: 'ls', decision: 'approve' }] });
    const exec = operator.exec(sid, {
      title: 'siblings',
      code:
        'const held = ls({}); await new Promise((r) => setTimeout(r, 600)); text("timer done");' +
        ' return Array.isArray((await held).entries);',
    });
    const [approval] = await pendingApprovals(operator, sid);
    await sleep(2 * BUDGET_MS);
    expect((await decide(operator, sid, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    expect(await exec).toMatchObject({ status: 'completed', value: true, output: [{ type: 'text', text: 'timer done' }] });
  });

  it('gives the waiting call no in-flight slot: with one slot, the next call runs before the decision', async () => {
    const sid = 'one-slot';
    await session(sid, approveLs);
    expect((await putJson(operator, 'PUT', `/v1/sessions/${sid}`, { codeMode: { maxPendingToolCalls: 1 } })).status).toBe(200);
    const exec = operator.exec(sid, {
      title: 'slot',
      code: 'const held = ls({}); const found = await find({ pattern: "*" }); return [Array.isArray(found.files), Array.isArray((await held).entries)];',
    });
    const [approval] = await pendingApprovals(operator, sid);
    let settled = false;
    for (let i = 0; i < 100 && !settled; i += 1) {
      settled = (await eventsOf(operator, sid)).some((e) => e.type === 'tool.settled' && e.data.tool === 'find');
      if (!settled) await sleep(50);
    }
    expect(settled).toBe(true);
    expect((await decide(operator, sid, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    expect(await exec).toMatchObject({ status: 'completed', value: [true, true] });
  });

  it('parks at once when the guest yields while an approval is pending; the next wait pauses for the decision', async () => {
    const sid = 'yield';
    await session(sid, approveLs);
    const first = expectStatus(
      await operator.exec(sid, {
        title: 'yield',
        code: 'const p = ls({}); await yield_control("later"); return Array.isArray((await p).entries);',
      }),
      'waiting',
    );
    expect(first.pendingToolCalls?.map((c) => c.id)).toContain('bridge:callValue:1');
    const [approval] = await pendingApprovals(operator, sid);
    expect(approval.runId).toBe(first.runId);
    const started = Date.now();
    const wait = operator.wait(sid, first.runId);
    await sleep(2 * BUDGET_MS);
    expect((await decide(operator, sid, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    expect(await wait).toMatchObject({ status: 'completed', value: true });
    expect(Date.now() - started).toBeGreaterThan(2 * BUDGET_MS);
  });

  it('calls a webhook client tool exactly once on approve and never on deny', async () => {
    const sid = 'webhook-tool';
    await session(sid, { rules: [{ tool: 'charge_card', decision: 'approve' }] });
    await operator.putTools(sid, [{ name: 'charge_card', description: 'Charges a card', endpoint: `${tool.url}/charge` }]);
    const approved = operator.exec(sid, { title: 'charge', code: 'return await charge_card({ amount: 5 });' });
    const [first] = await pendingApprovals(operator, sid);
    expect(first.tool).toBe('charge_card');
    expect(first.input).toEqual({ amount: 5 });
    expect(tool.requests).toHaveLength(0);
    expect((await decide(operator, sid, first.approvalId, { decision: 'approve' })).status).toBe(200);
    expect(await approved).toMatchObject({ status: 'completed', value: { charged: true } });
    expect(tool.requests).toHaveLength(1);

    const denied = operator.exec(sid, {
      title: 'charge again',
      code: 'try { return await charge_card({ amount: 7 }); } catch (e) { return e.message; }',
    });
    const [second] = await pendingApprovals(operator, sid);
    expect((await decide(operator, sid, second.approvalId, { decision: 'deny', reason: 'limit' })).status).toBe(200);
    expect(await denied).toMatchObject({ status: 'completed', value: 'code mode tool charge_card was denied: limit' });
    expect(tool.requests).toHaveLength(1);
  });

  it('hands an approved call of a platform-answered client tool back to the platform', async () => {
    const sid = 'platform-tool';
    await session(sid, { rules: [{ tool: 'ask_human', decision: 'approve' }] });
    await operator.putTools(sid, [{ name: 'ask_human', description: 'Asks a human' }]);
    const exec = operator.exec(sid, { title: 'ask', code: 'const a = await ask_human({ q: 1 }); return a.answer * 2;' });
    const [approval] = await pendingApprovals(operator, sid);
    expect((await decide(operator, sid, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    const parked = expectStatus(await exec, 'waiting');
    expect(parked.pendingToolCalls).toEqual([{ id: 'bridge:callValue:1', method: 'callValue', tool: 'ask_human', input: { q: 1 } }]);
    expect((await operator.toolResults(sid, parked.runId, [{ id: 'bridge:callValue:1', ok: true, value: { answer: 21 } }])).accepted).toBe(
      1,
    );
    expect(await operator.wait(sid, parked.runId)).toMatchObject({ status: 'completed', value: 42 });
  });

  it('leaves the REST shell routes outside the policy', async () => {
    const sid = 'shell-rest';
    await session(sid, { rules: [{ tool: 'exec', decision: 'deny' }], default: 'deny' });
    const answer = await operator.shellExec(sid, { command: 'echo outside-policy' });
    expect(answer.text).toContain('outside-policy');
    const inCell = await operator.exec(sid, {
      title: 'shell',
      code: 'try { await exec({ command: "echo hi" }); } catch (e) { return e.message; }',
    });
    expect(inCell).toMatchObject({ status: 'completed', value: 'code mode tool exec is blocked by policy.' });
  });
});

import type { Event, TenantApprovalView } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from '../utils/test-stack';
import { decide, eventsOf, expectStatus, pendingApprovals, putJson, RecordingServer } from './approval-helpers';

jest.setTimeout(180_000);

/**
 * SPEC §11 "Keys may carry a role", attacked with alpha's agent key on a multi-tenant stack: the
 * REST shell routes are under the session's policy, an operator's client tools stay the
 * operator's, and approval cards show where a call goes. Beta (another tenant) works meanwhile.
 */
const OPERATOR_KEY = 'agentkeys-alpha-operator';
const OPERATOR_ROLE_KEY = 'agentkeys-alpha-operator-role';
const AGENT_KEY = 'agentkeys-alpha-agent';
const BETA_KEY = 'agentkeys-beta-operator';
const API_KEYS = [`${OPERATOR_KEY}:alpha`, `${OPERATOR_ROLE_KEY}:alpha:operator`, `${AGENT_KEY}:alpha:agent`, `${BETA_KEY}:beta`].join(',');
/** Beta's work must finish this soon while alpha's agent attacks (a loaded 2-core machine included). */
const VICTIM_MS = 15_000;

const EXEC_BLOCKED = { code: 'policy_denied', error: 'code mode tool exec is blocked by policy.' };
const EXEC_NEEDS_APPROVAL = { code: 'policy_denied', error: "code mode tool exec needs an operator's approval; call it from a cell." };
const PROCESS_BLOCKED = { code: 'policy_denied', error: 'code mode tool process is blocked by policy.' };
const PROCESS_NEEDS_APPROVAL = {
  code: 'policy_denied',
  error: "code mode tool process needs an operator's approval; call it from a cell.",
};
const lockedBody = (name: string) => ({
  code: 'forbidden',
  error: `code mode tool ${name} was registered by an operator; an agent key cannot change it.`,
});

describe('agent keys under policy (SPEC §11)', () => {
  let stack: TestStack;
  let operator: CodeModeClient;
  let operatorRole: CodeModeClient;
  let agent: CodeModeClient;
  let beta: CodeModeClient;
  let operatorHook: RecordingServer;
  let agentHook: RecordingServer;
  let betaHook: RecordingServer;

  beforeAll(async () => {
    operatorHook = await RecordingServer.start(() => ({ from: 'operator' }));
    agentHook = await RecordingServer.start(() => ({ from: 'agent' }));
    betaHook = await RecordingServer.start(() => ({ from: 'beta' }));
    stack = await TestStack.start({ apiKeys: API_KEYS, env: { CODEMODE_WEBHOOK_ALLOW: '127.0.0.1' } });
    operator = stack.client(OPERATOR_KEY);
    operatorRole = stack.client(OPERATOR_ROLE_KEY);
    agent = stack.client(AGENT_KEY);
    beta = stack.client(BETA_KEY);
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([operatorHook?.close(), agentHook?.close(), betaHook?.close()]);
  });

  /** Beta's own shell command and cell, each finished within VICTIM_MS and intact. */
  async function betaStillWorks(sid: string): Promise<void> {
    const started = Date.now();
    const shell = await beta.shellExec(sid, { command: 'echo beta-intact' });
    expect(shell.text).toContain('beta-intact');
    const cell = await beta.exec(sid, { title: 'beta', code: 'store("n", 41); return (await load("n")) + 1;' });
    expect(cell).toMatchObject({ status: 'completed', value: 42 });
    expect(Date.now() - started).toBeLessThan(VICTIM_MS);
    expect((await fetch(`${stack.baseUrl}/health/ready`)).status).toBe(200);
  }

  const shellExec = (client: CodeModeClient, sid: string, command: string) =>
    putJson(client, 'POST', `/v1/sessions/${sid}/shell/exec`, { command });
  const processList = (client: CodeModeClient, sid: string) => putJson(client, 'POST', `/v1/sessions/${sid}/process`, { action: 'list' });

  it("refuses an agent key's REST shell/exec and process under the effective policy; operator keys are not subject to it", async () => {
    const tenantPolicy = {
      rules: [
        { tool: 'exec', decision: 'deny' },
        { tool: 'process', decision: 'approve' },
      ],
    };
    expect((await putJson(operator, 'PUT', '/v1/policy', tenantPolicy)).status).toBe(200);

    const denied = await shellExec(agent, 'agent-shell', 'echo agent-ran > /tmp/agentkeys-marker; echo agent-ran');
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual(EXEC_BLOCKED);
    // Host "node" commands share the shell tool's policy name.
    const nodeHost = await putJson(agent, 'POST', '/v1/sessions/agent-shell/shell/exec', { command: 'echo x', host: 'node' });
    expect(nodeHost.body).toEqual(EXEC_BLOCKED);
    const held = await processList(agent, 'agent-shell');
    expect(held.status).toBe(403);
    expect(held.body).toEqual(PROCESS_NEEDS_APPROVAL);
    // Refused before anything is written: not even the session exists.
    expect((await operator.raw('GET', '/v1/sessions/agent-shell')).status).toBe(404);

    // Both operator key forms run the same commands outside the policy.
    expect((await operator.shellExec('agent-shell', { command: 'echo by-operator' })).text).toContain('by-operator');
    expect((await operatorRole.shellExec('agent-shell', { command: 'echo by-operator-role' })).text).toContain('by-operator-role');
    expect((await processList(operatorRole, 'agent-shell')).status).toBe(200);

    // The session's rules come after the tenant's, as in cells: an allow there lets the agent run.
    expect(
      (await putJson(operator, 'PUT', '/v1/sessions/agent-allowed', { policy: { rules: [{ tool: 'exec', decision: 'allow' }] } })).status,
    ).toBe(200);
    expect((await agent.shellExec('agent-allowed', { command: 'echo allowed-for-agent' })).text).toContain('allowed-for-agent');
    expect((await processList(agent, 'agent-allowed')).body).toEqual(PROCESS_NEEDS_APPROVAL);
    const sessionPolicy = {
      rules: [
        { tool: 'e*', decision: 'approve' },
        { tool: 'process', decision: 'deny' },
      ],
    };
    expect((await putJson(operator, 'PUT', '/v1/sessions/agent-approve', { policy: sessionPolicy })).status).toBe(200);
    expect((await shellExec(agent, 'agent-approve', 'echo x')).body).toEqual(EXEC_BLOCKED);
    expect((await putJson(operator, 'PUT', '/v1/policy', { rules: [], default: 'approve' })).status).toBe(200);
    expect((await shellExec(agent, 'agent-approve', 'echo x')).body).toEqual(EXEC_NEEDS_APPROVAL);
    expect((await processList(agent, 'agent-approve')).body).toEqual(PROCESS_BLOCKED);
    // The policy is read per request: lifting it lets the agent's command through at once.
    expect((await putJson(operator, 'PUT', '/v1/policy', { rules: [] })).status).toBe(200);
    expect((await agent.shellExec('agent-shell', { command: 'echo now-allowed' })).text).toContain('now-allowed');

    // Beta's policy and shell are its own.
    expect((await beta.raw('GET', '/v1/policy')).body).toEqual({ rules: [] });
    await betaStillWorks('beta-shell');
  });

  it("keeps an operator's client tool from an agent key's PUT /tools, and its calls go to the operator's endpoint", async () => {
    const sid = 'agent-tools';
    const charge = {
      name: 'charge_card',
      description: 'Charges a card',
      inputSchema: { type: 'object', properties: { amount: { type: 'number' } } },
      endpoint: `${operatorHook.url}/charge`,
    };
    await operator.putTools(sid, [charge]);
    await beta.putTools(sid, [{ ...charge, endpoint: `${betaHook.url}/charge` }]);

    const attempts = [
      { ...charge, endpoint: `${agentHook.url}/steal` },
      { ...charge, endpoint: undefined },
      { ...charge, inputSchema: { type: 'object', properties: { amount: { type: 'string' } } } },
      { ...charge, outputSchema: { type: 'object' } },
      { ...charge, replaySafe: true },
    ];
    for (const attempt of attempts) {
      const res = await putJson(agent, 'PUT', `/v1/sessions/${sid}/tools`, { tools: [attempt] });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(lockedBody('charge_card'));
    }
    // Left out, it stays; re-sent unchanged (key order aside), it stays the operator's; the agent adds its own.
    expect((await putJson(agent, 'PUT', `/v1/sessions/${sid}/tools`, { tools: [] })).status).toBe(200);
    const note = { name: 'note', description: 'Takes a note', endpoint: `${agentHook.url}/note` };
    const resent = { endpoint: charge.endpoint, description: 'A free card', name: 'charge_card', inputSchema: charge.inputSchema };
    const view = await putJson(agent, 'PUT', `/v1/sessions/${sid}/tools`, { tools: [resent, note] });
    expect(view.status).toBe(200);
    const names = (view.body as { catalog: { toolName: string; description: string }[] }).catalog.filter((t) =>
      ['charge_card', 'note'].includes(t.toolName),
    );
    expect(names).toEqual([
      expect.objectContaining({ toolName: 'charge_card', description: 'Charges a card' }),
      expect.objectContaining({ toolName: 'note' }),
    ]);
    // The agent may change its own tool as it likes.
    const movedNote = { ...note, endpoint: `${agentHook.url}/note2` };
    expect((await putJson(agent, 'PUT', `/v1/sessions/${sid}/tools`, { tools: [movedNote] })).status).toBe(200);

    const result = await agent.exec(sid, { title: 'call both', code: 'return [await charge_card({ amount: 1 }), await note({})];' });
    expect(expectStatus(result, 'completed').value).toEqual([{ from: 'operator' }, { from: 'agent' }]);
    expect(operatorHook.requests.map((r) => r.url)).toEqual(['/charge']);
    expect(agentHook.requests.map((r) => r.url)).toEqual(['/note2']);

    // An operator's PUT replaces everything, the agent's tools included.
    await operatorRole.putTools(sid, [charge]);
    const after = (await operator.raw('GET', `/v1/sessions/${sid}/tools`)).body as { catalog: { toolName: string }[] };
    expect(after.catalog.map((t) => t.toolName)).toContain('charge_card');
    expect(after.catalog.map((t) => t.toolName)).not.toContain('note');

    // Beta's tool of the same name and session id is untouched and still reaches beta's endpoint.
    const betaCall = await beta.exec(sid, { title: 'beta charge', code: 'return await charge_card({ amount: 2 });' });
    expect(expectStatus(betaCall, 'completed').value).toEqual({ from: 'beta' });
    expect(betaHook.requests.map((r) => r.url)).toEqual(['/charge']);
    await betaStillWorks(sid);
  });

  it('shows a client tool’s endpoint on approval cards: the event, both listings', async () => {
    const sid = 'agent-approval';
    const endpoint = `${operatorHook.url}/refund`;
    expect(
      (await putJson(operator, 'PUT', `/v1/sessions/${sid}`, { policy: { rules: [{ tool: 'refund', decision: 'approve' }] } })).status,
    ).toBe(200);
    await operator.putTools(sid, [{ name: 'refund', description: 'Refunds', endpoint }]);
    const before = operatorHook.requests.length;
    const exec = agent.exec(sid, { title: 'refund', code: 'return await refund({ amount: 3 });' });
    const [approval] = await pendingApprovals(operator, sid);
    expect(approval).toMatchObject({ tool: 'refund', input: { amount: 3 }, endpoint });
    const tenantWide = (await operator.raw('GET', '/v1/approvals')).body as { approvals: TenantApprovalView[] };
    expect(tenantWide.approvals).toContainEqual({ ...approval, sessionId: sid });
    const requested = (await eventsOf(operator, sid)).find((e: Event) => e.type === 'approval.requested');
    expect(requested?.data).toEqual({
      approvalId: approval.approvalId,
      runId: approval.runId,
      callId: approval.callId,
      tool: 'refund',
      input: { amount: 3 },
      endpoint,
    });

    // While it waits, the agent can neither move the tool nor decide.
    const moved = await putJson(agent, 'PUT', `/v1/sessions/${sid}/tools`, {
      tools: [{ name: 'refund', description: 'Refunds', endpoint: `${agentHook.url}/refund` }],
    });
    expect(moved.body).toEqual(lockedBody('refund'));
    expect((await decide(agent, sid, approval.approvalId, { decision: 'approve' })).status).toBe(403);
    // Beta lists none of alpha's approvals and works on.
    expect((await beta.raw('GET', '/v1/approvals')).body).toEqual({ approvals: [] });
    await betaStillWorks('beta-approval');

    expect((await decide(operator, sid, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    expect(expectStatus(await exec, 'completed').value).toEqual({ from: 'operator' });
    expect(operatorHook.requests.slice(before).map((r) => r.url)).toEqual(['/refund']);
    expect(agentHook.requests.map((r) => r.url)).not.toContain('/refund');
  });
});

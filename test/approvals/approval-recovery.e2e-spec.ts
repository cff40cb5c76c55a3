import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from '../utils/test-stack';
import { decide, eventsOf, expectStatus, metric, pendingApprovals, putJson, sleep } from './approval-helpers';

jest.setTimeout(120_000);

const BUDGET_MS = 1000;
const TIMEOUT_SECONDS = 2;
const approveLs = { rules: [{ tool: 'ls', decision: 'approve' }] };

describe('approvals that time out, and decisions taken while the worker is down (SPEC §11)', () => {
  let stack: TestStack;
  let client: CodeModeClient;

  beforeAll(async () => {
    stack = await TestStack.start({
      env: { CODEMODE_APPROVAL_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS), CODEMODE_LEASE_MS: '1000' },
    });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function session(sid: string): Promise<void> {
    mkdirSync(join(stack.workspaceRoot, 'default', sid), { recursive: true });
    const res = await putJson(client, 'PUT', `/v1/sessions/${sid}`, { codeMode: { timeoutMs: BUDGET_MS }, policy: approveLs });
    expect(res.status).toBe(200);
  }

  it('denies an approval nobody decides with "approval timed out", past the cell\'s own budget', async () => {
    const sid = 'timeout';
    await session(sid);
    const workerUrl = stack.workerUrl(stack.workers[0]);
    const before = await metric(workerUrl, 'codemode_approvals_total{decision="timeout"}');
    const started = Date.now();
    const result = await client.exec(sid, {
      title: 'late',
      code: 'try { await ls({}); return "called"; } catch (e) { return e.message; }',
    });
    expect(result).toMatchObject({ status: 'completed', value: 'code mode tool ls was denied: approval timed out' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 1000);
    expect(await metric(workerUrl, 'codemode_approvals_total{decision="timeout"}')).toBe(before + 1);
    const decided = (await eventsOf(client, sid)).find((e) => e.type === 'approval.decided');
    expect(decided?.data).toMatchObject({ decision: 'deny', reason: 'approval timed out', timedOut: true });
  });

  it('applies a decision taken while the owner worker is down when a new worker resumes the run', async () => {
    const sid = 'owner-down';
    await session(sid);
    const first = expectStatus(
      await client.exec(sid, {
        title: 'held',
        code: 'const p = ls({}); await yield_control("park"); return Array.isArray((await p).entries);',
        restartSafe: true,
      }),
      'waiting',
    );
    const [approval] = await pendingApprovals(client, sid);
    await stack.workers[0].kill();
    expect((await decide(client, sid, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    await sleep(1500);
    await stack.addWorker();
    expect(await client.wait(sid, first.runId)).toMatchObject({ status: 'completed', value: true, replaySafe: true });
    const types = (await eventsOf(client, sid)).filter((e) => e.runId === first.runId).map((e) => e.type);
    expect(types.filter((t) => t.startsWith('approval.'))).toEqual(['approval.requested', 'approval.decided']);
    expect(types).toContain('run.recovered');
    expect(types.filter((t) => t === 'tool.called')).toHaveLength(1);
  });
});

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from '../utils/test-stack';
import { decide, eventsOf, pendingApprovals, putJson } from './approval-helpers';

jest.setTimeout(120_000);

const EVERYTHING = join(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

describe('MCP tools go through the same policy path (SPEC §11)', () => {
  let stack: TestStack;
  let client: CodeModeClient;

  beforeAll(async () => {
    stack = await TestStack.start({
      env: { CODEMODE_MCP_SERVERS: JSON.stringify([{ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] }]) },
    });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('blocks an exact MCP name, holds the rest of the server for approval under a glob', async () => {
    const sid = 'mcp';
    mkdirSync(join(stack.workspaceRoot, 'default', sid), { recursive: true });
    const policy = {
      rules: [
        { tool: 'MCP.everything.*', decision: 'approve' },
        { tool: 'MCP.everything.echo', decision: 'deny' },
      ],
    };
    expect((await putJson(client, 'PUT', `/v1/sessions/${sid}`, { codeMode: { timeoutMs: 1000 }, policy })).status).toBe(200);
    const blocked = await client.exec(sid, {
      title: 'echo',
      code: "try { await MCP.everything.echo({ message: 'x' }); return 'called'; } catch (e) { return e.message; }",
    });
    expect(blocked).toMatchObject({ status: 'completed', value: 'code mode tool MCP.everything.echo is blocked by policy.' });

    const sum = client.exec(sid, {
      title: 'sum',
      code: 'const r = await MCP.everything.getSum({ a: 2, b: 3 }); return r.content[0].text;',
    });
    const [approval] = await pendingApprovals(client, sid);
    expect(approval.tool).toBe('MCP.everything.get-sum');
    expect(approval.input).toEqual({ a: 2, b: 3 });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await decide(client, sid, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    expect(await sum).toMatchObject({ status: 'completed', value: expect.stringContaining('5') });
    const types = (await eventsOf(client, sid)).map((e) => e.type);
    expect(types.filter((t) => t === 'tool.blocked')).toHaveLength(1);
    expect(types.filter((t) => t === 'tool.called')).toHaveLength(1);
  });
});

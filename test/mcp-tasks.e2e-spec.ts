import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  TaskStatusNotificationSchema,
  type CallToolResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { CodeModeResult, RunView } from '@codemode/contracts';
import { TestStack } from './utils/test-stack';

jest.setTimeout(120_000);

const ALPHA = 'tasks-key-alpha';
const BETA = 'tasks-key-beta';
const SESSION = 'tasks';

/** The official SDK's client over streamable HTTP, in one Code Mode session, on one API replica. */
async function connect(baseUrl: string, key: string, session = SESSION): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, 'x-codemode-session': session } },
  });
  const client = new Client({ name: 'e2e-tasks', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A task-augmented tools/call: the CreateTaskResult, as the SDK's client reads it. */
async function callAsTask(client: Client, name: string, args: Record<string, unknown>, ttl = 120_000) {
  return (await client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl } } }, CreateTaskResultSchema)).task;
}

const structured = (result: unknown) => (result as CallToolResult).structuredContent as CodeModeResult & Record<string, unknown>;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('Code Mode as MCP tasks (SPEC §14 Tasks)', () => {
  let stack: TestStack;
  let second: string;
  const clients: Client[] = [];
  const open = async (baseUrl: string, key = ALPHA, session = SESSION) => {
    const client = await connect(baseUrl, key, session);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    // Every client here keeps its notification stream open, each holding a stream slot: room for all of them.
    stack = await TestStack.start({ apiKeys: `${ALPHA}:alpha,${BETA}:beta`, env: { CODEMODE_TENANT_MAX_STREAMS: '64' } });
    second = (await stack.addApi()).baseUrl;
    // agents.run: a platform call an awaitResults cell stays in flight on (SPEC §15).
    await stack.client(ALPHA).putSession(SESSION, { agents: true });
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await stack?.stop();
  });

  it('declares the tasks capability and both tools as optional tasks', async () => {
    const client = await open(stack.baseUrl);
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool.name, tool.execution])).toEqual([
      ['exec', { taskSupport: 'optional' }],
      ['wait', { taskSupport: 'optional' }],
    ]);
  });

  it('runs `return 1` as a task: its id is the runId, completed with what the plain call answers', async () => {
    const client = await open(stack.baseUrl);
    const plain = await client.callTool({ name: 'exec', arguments: { title: 'one', code: 'return 1' } });
    const task = await callAsTask(client, 'exec', { title: 'one', code: 'return 1' }, 90_000);
    expect(task).toMatchObject({ taskId: expect.stringMatching(/^cm_/), pollInterval: 1000, ttl: 90_000 });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(false);
    expect(structured(result)).toMatchObject({ status: 'completed', value: 1 });
    expect(Object.keys(structured(result)).sort()).toEqual(Object.keys(structured(plain)).sort());
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(structured(result));
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'completed', ttl: 90_000 });
    const run = (await stack.client(ALPHA).raw('GET', `/v1/sessions/${SESSION}/runs/${task.taskId}`)).body as RunView;
    expect(run.status).toBe('completed');
  });

  it('streams an exec as a task with the SDK client (taskCreated, then the result)', async () => {
    const client = await open(stack.baseUrl);
    const kinds: string[] = [];
    let last: unknown;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'exec', arguments: { title: 'stream', code: 'await new Promise(r => setTimeout(r, 300)); return "late"' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      kinds.push(message.type);
      if (message.type === 'result') last = message.result;
    }
    expect(kinds[0]).toBe('taskCreated');
    expect(kinds.at(-1)).toBe('result');
    expect(structured(last)).toMatchObject({ status: 'completed', value: 'late' });
  });

  it('keeps an awaitResults cell working, waiting for the platform, on any replica; completed after tool-results', async () => {
    const first = await open(stack.baseUrl);
    const other = await open(second);
    const task = await callAsTask(first, 'exec', {
      title: 'ask',
      code: 'const answer = await agents.run({ task: "go?" }); return { answer };',
      awaitResults: true,
    });
    const waiting = await until(
      () => other.experimental.tasks.getTask(task.taskId),
      (t) => t.statusMessage !== undefined,
    );
    expect(waiting).toMatchObject({ taskId: task.taskId, status: 'working', statusMessage: 'waiting for the platform: agents.run' });
    expect(((await stack.client(ALPHA).raw('GET', `/v1/sessions/${SESSION}/runs/${task.taskId}`)).body as RunView).status).toBe('running');
    const resultOnOther = other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    const ack = await stack.client(ALPHA).raw('POST', `/v1/sessions/${SESSION}/runs/${task.taskId}/tool-results`, {
      body: JSON.stringify({ results: [{ id: 'bridge:callValue:1', ok: true, value: 'yes' }] }),
    });
    expect(ack.status).toBe(202);
    expect(structured(await resultOnOther)).toMatchObject({ status: 'completed', value: { answer: 'yes' } });
    expect(await first.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'completed' });
  });

  it('tells the session notification stream of each status change (notifications/tasks/status)', async () => {
    const client = await open(stack.baseUrl, ALPHA, 'tasks-notified');
    await stack.client(ALPHA).putSession('tasks-notified', { agents: true });
    const told: Task[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => void told.push(notification.params as Task));
    // The notification stream (GET /mcp) is open once the client has had time to make it.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const task = await callAsTask(client, 'exec', {
      title: 'told',
      code: 'return await agents.run({ task: "tell" });',
      awaitResults: true,
    });
    const mine = () => told.filter((t) => t.taskId === task.taskId);
    await until(
      () => Promise.resolve(mine()),
      (seen) => seen.some((t) => t.statusMessage === 'waiting for the platform: agents.run'),
    );
    const ack = await stack.client(ALPHA).raw('POST', `/v1/sessions/tasks-notified/runs/${task.taskId}/tool-results`, {
      body: JSON.stringify({ results: [{ id: 'bridge:callValue:1', ok: true, value: 'told' }] }),
    });
    expect(ack.status).toBe(202);
    await until(
      () => Promise.resolve(mine()),
      (seen) => seen.some((t) => t.status === 'completed'),
    );
    expect(mine().at(-1)).toMatchObject({ taskId: task.taskId, status: 'completed', pollInterval: 1000 });
    expect(mine().some((t) => t.status === 'working' && t.statusMessage === 'waiting for the platform: agents.run')).toBe(true);
  });

  it('cancels a working task as a run abort; a terminal task refuses cancel with -32602', async () => {
    const client = await open(stack.baseUrl);
    const task = await callAsTask(client, 'exec', { title: 'held', code: 'return await agents.run({ task: "?" });', awaitResults: true });
    await until(
      () => client.experimental.tasks.getTask(task.taskId),
      (t) => t.statusMessage !== undefined,
    );
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'cancelled' });
    const run = (await stack.client(ALPHA).raw('GET', `/v1/sessions/${SESSION}/runs/${task.taskId}`)).body as RunView;
    expect(run.lastResult).toMatchObject({ status: 'failed', code: 'aborted' });
    const again = await refusal(client.experimental.tasks.cancelTask(task.taskId));
    expect(again.code).toBe(-32602);
  });

  it('numbers task-augmented waits <runId>:w<n> and answers them like the plain wait', async () => {
    const client = await open(stack.baseUrl);
    const parked = structured(await client.callTool({ name: 'exec', arguments: { title: 'y', code: 'await yield_control(); return 5;' } }));
    expect(parked).toMatchObject({ status: 'waiting' });
    const runId = (parked as Extract<CodeModeResult, { status: 'waiting' }>).runId;
    const task = await callAsTask(client, 'wait', { runId });
    expect(task.taskId).toBe(`${runId}:w1`);
    expect(structured(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).toMatchObject({
      status: 'completed',
      value: 5,
    });
    // Every task-augmented wait on the run counts, whatever it answers.
    const again = await callAsTask(client, 'wait', { runId });
    expect(again.taskId).toBe(`${runId}:w2`);
    const plain = await client.callTool({ name: 'wait', arguments: { runId } });
    const answer = await client.experimental.tasks.getTaskResult(again.taskId, CallToolResultSchema);
    expect({ isError: answer.isError, result: structured(answer) }).toEqual({ isError: plain.isError, result: structured(plain) });
  });

  it('answers an exec refused at input as a completed task rej-<event id>', async () => {
    const client = await open(stack.baseUrl);
    const task = await callAsTask(client, 'exec', { title: 'no code' });
    expect(task).toMatchObject({ taskId: expect.stringMatching(/^rej-\d+-\d+$/), status: 'completed' });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(structured(result)).toMatchObject({ status: 'failed', code: 'invalid_input' });
  });

  it('lists the session tasks newest first; another tenant or session knows none of them', async () => {
    const session = 'tasks-list';
    const client = await open(stack.baseUrl, ALPHA, session);
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await callAsTask(client, 'exec', { title: `l${i}`, code: `return ${i}` })).taskId);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toEqual([...ids].reverse());
    expect(listed.nextCursor).toBeUndefined();
    const beta = await open(stack.baseUrl, BETA, session);
    expect((await refusal(beta.experimental.tasks.getTask(ids[0]))).code).toBe(-32602);
    expect((await beta.experimental.tasks.listTasks()).tasks).toEqual([]);
    const otherSession = await open(second, ALPHA, 'tasks-elsewhere');
    expect((await refusal(otherSession.experimental.tasks.getTask(ids[0]))).code).toBe(-32602);
  });

  it('answers for a task after the API that made it was killed mid-task, and completes it once the platform answers', async () => {
    const before = await connect(stack.baseUrl, ALPHA);
    const task = await callAsTask(before, 'exec', {
      title: 'outlives its api',
      code: 'const answer = await agents.run({ task: "later" }); return { answer };',
      awaitResults: true,
    });
    await until(
      () => before.experimental.tasks.getTask(task.taskId),
      (t) => t.statusMessage !== undefined,
    );
    await before.close().catch(() => undefined);
    await stack.restartApi({ signal: 'SIGKILL' });
    const after = await open(stack.baseUrl);
    expect(await after.experimental.tasks.getTask(task.taskId)).toMatchObject({
      status: 'working',
      statusMessage: 'waiting for the platform: agents.run',
    });
    const ack = await stack.client(ALPHA).raw('POST', `/v1/sessions/${SESSION}/runs/${task.taskId}/tool-results`, {
      body: JSON.stringify({ results: [{ id: 'bridge:callValue:1', ok: true, value: 'after' }] }),
    });
    expect(ack.status).toBe(202);
    const result = await after.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(structured(result)).toMatchObject({ status: 'completed', value: { answer: 'after' } });
    expect((await after.experimental.tasks.listTasks()).tasks[0]).toMatchObject({ taskId: task.taskId, status: 'completed' });
  });
});

describe('a blocked tasks/result is a held connection (SPEC §14 Tasks, §10)', () => {
  let stack: TestStack;
  const clients: Client[] = [];
  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: `${ALPHA}:alpha`, env: { CODEMODE_TENANT_MAX_STREAMS: '2' } });
    await stack.client(ALPHA).putSession(SESSION, { agents: true });
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await stack?.stop();
  });

  it("takes one of the tenant's stream slots while it waits; past the quota it is refused, an answered task is not", async () => {
    // Its notification stream (GET /mcp) takes one of the two slots.
    const client = await connect(stack.baseUrl, ALPHA);
    clients.push(client);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const held = await callAsTask(client, 'exec', { title: 'held', code: 'return await agents.run({ n: 1 });', awaitResults: true });
    const other = await callAsTask(client, 'exec', { title: 'other', code: 'return await agents.run({ n: 2 });', awaitResults: true });
    const blocked = client.experimental.tasks.getTaskResult(held.taskId, CallToolResultSchema, { timeout: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const refused = await refusal(client.experimental.tasks.getTaskResult(other.taskId, CallToolResultSchema));
    expect(refused.code).toBe(-32000);
    expect(refused.message).toContain('tenant event stream quota reached (2 open at once); close a stream first.');
    const answered = await callAsTask(client, 'exec', { title: 'done', code: 'return 3' });
    await until(
      () => client.experimental.tasks.getTask(answered.taskId),
      (t) => t.status === 'completed',
    );
    expect(structured(await client.experimental.tasks.getTaskResult(answered.taskId, CallToolResultSchema))).toMatchObject({ value: 3 });
    for (const [task, value] of [
      [held, 'one'],
      [other, 'two'],
    ] as const) {
      const ack = await stack.client(ALPHA).raw('POST', `/v1/sessions/${SESSION}/runs/${task.taskId}/tool-results`, {
        body: JSON.stringify({ results: [{ id: 'bridge:callValue:1', ok: true, value }] }),
      });
      expect(ack.status).toBe(202);
    }
    expect(structured(await blocked)).toMatchObject({ status: 'completed', value: 'one' });
    // The held slot was given back: the other task's result is read now.
    expect(structured(await client.experimental.tasks.getTaskResult(other.taskId, CallToolResultSchema))).toMatchObject({ value: 'two' });
  });
});

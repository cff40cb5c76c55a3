import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

interface Answer {
  text: string;
  details: Record<string, unknown>;
}

/** Command lines of live processes containing `marker` (ps, as a person would check). */
function processesWith(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('shell exec and process over REST', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  const post = async (sid: string, route: 'shell/exec' | 'process', body: unknown): Promise<Answer> => {
    const res = await client.raw('POST', `/v1/sessions/${sid}/${route}`, {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    return res.body as Answer;
  };

  beforeAll(async () => {
    stack = await TestStack.start();
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('runs a foreground command with OPENCLAW_SHELL=exec in the session workspace, shown at /workspace', async () => {
    await mkdir(join(stack.workspaceRoot, 'default', 'sh1', 'sub'), { recursive: true });
    const answer = await post('sh1', 'shell/exec', { command: 'echo "$OPENCLAW_SHELL"; pwd' });
    expect(answer.details).toMatchObject({ status: 'completed', exitCode: 0, cwd: '/workspace' });
    expect(answer.details.aggregated).toBe('exec\n/workspace');
    const inSub = await post('sh1', 'shell/exec', { command: 'pwd', workdir: '/workspace/sub' });
    expect(inSub.details).toMatchObject({ status: 'completed', cwd: '/workspace/sub', aggregated: '/workspace/sub' });
    const outside = await post('sh1', 'shell/exec', { command: 'pwd', workdir: '/etc' });
    expect(outside).toMatchObject({ text: 'workdir "/etc" is outside the workspace /workspace.', details: { status: 'failed' } });
    const failed = await post('sh1', 'shell/exec', { command: 'exit 3' });
    expect(failed.text).toContain('(Command exited with code 3)');
    expect(failed.details).toMatchObject({ exitCode: 3 });
  });

  it('backgrounds, lists, polls, writes stdin, and kills process sessions', async () => {
    const started = await post('sh2', 'shell/exec', { command: 'cat', background: true });
    expect(started.details).toMatchObject({ status: 'running', sessionId: expect.any(String), pid: expect.any(Number) });
    const id = String(started.details.sessionId);
    expect(started.text).toBe(
      `Command still running (session ${id}, pid ${String(started.details.pid)}). Use process (list/poll/log/write/send-keys/submit/paste/kill/clear/remove) for follow-up.`,
    );
    const list = await post('sh2', 'process', { action: 'list' });
    expect(list.text).toContain(id);
    expect(await post('sh2', 'process', { action: 'write', sessionId: id, data: 'abc\n', eof: true })).toMatchObject({
      text: `Wrote 4 bytes to session ${id} (stdin closed).`,
    });
    await sleep(300);
    const poll = await post('sh2', 'process', { action: 'poll', sessionId: id });
    expect(poll.text).toContain('abc');
    expect(poll.text).toContain('Process exited with code 0.');
    expect(poll.details).toMatchObject({ status: 'completed' });

    const sleeper = await post('sh2', 'shell/exec', { command: 'sleep 30', background: true });
    const sid = String(sleeper.details.sessionId);
    expect(await post('sh2', 'process', { action: 'poll', sessionId: sid })).toMatchObject({
      text: expect.stringContaining('Process still running.'),
    });
    expect(await post('sh2', 'process', { action: 'kill', sessionId: sid })).toMatchObject({
      text: `Termination requested for session ${sid}.`,
    });
  });

  it('answers tool-level errors with 200 and wrong field types with 400', async () => {
    expect(await post('sh3', 'process', { action: 'dance' })).toEqual({
      text: 'Invalid process action. Expected one of: list, poll, log, write, send-keys, submit, paste, kill, clear, remove',
      details: { status: 'failed' },
    });
    expect(await post('sh3', 'process', { action: 'poll' })).toMatchObject({
      text: 'sessionId is required for this action.',
      details: { status: 'failed' },
    });
    expect(await post('sh3', 'process', { action: 'poll', sessionId: 'nope-nope' })).toMatchObject({
      text: 'No session found for nope-nope',
    });
    const bad = await client.raw('POST', '/v1/sessions/sh3/shell/exec', { body: JSON.stringify({ command: 5 }) });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_input', details: { field: 'command' } });
    expect((await client.raw('POST', '/v1/sessions/sh3/process', { body: '[]' })).status).toBe(400);
    expect((await post('sh3', 'shell/exec', { command: 'sleep 1', background: true, awaitResults: true })).text).toContain(
      'cannot be detached',
    );
    // SPEC §7: nothing runs elevated, nor on a node this service cannot reach.
    expect(await post('sh3', 'shell/exec', { command: 'touch elevated-ran', elevated: true })).toEqual({
      text: 'elevated exec is not available in this service.',
      details: { status: 'failed' },
    });
    expect(await post('sh3', 'shell/exec', { command: 'touch node-ran', host: 'node', node: 'laptop' })).toEqual({
      text: 'unknown node: laptop',
      details: { status: 'failed' },
    });
    expect((await post('sh3', 'shell/exec', { command: 'ls' })).text).not.toMatch(/elevated-ran|node-ran/);
    const elevatedType = await client.raw('POST', '/v1/sessions/sh3/shell/exec', {
      body: JSON.stringify({ command: 'true', elevated: 'yes' }),
    });
    expect(elevatedType.status).toBe(400);
    expect(elevatedType.body).toMatchObject({ code: 'invalid_input', details: { field: 'elevated' } });
  });

  it('forgets removed sessions, and answers commands it cannot spawn at once', async () => {
    const done = await post('sh8', 'shell/exec', { command: 'echo gone', background: true });
    const id = String(done.details.sessionId);
    await sleep(300);
    expect(await post('sh8', 'process', { action: 'remove', sessionId: id })).toMatchObject({ text: `Removed session ${id}.` });
    expect((await post('sh8', 'process', { action: 'list' })).text).not.toContain(id);
    expect(await post('sh8', 'process', { action: 'poll', sessionId: id })).toMatchObject({ text: `No session found for ${id}` });
    const started = Date.now();
    const bad = await post('sh8', 'shell/exec', { command: 'echo a\u0000b' });
    expect(bad.details).toMatchObject({ status: 'failed' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('kills the whole process group on timeout, children included', async () => {
    const answer = await post('sh4', 'shell/exec', { command: "sh -c 'sleep 100.4242 & sleep 100.4242'", timeoutSeconds: 1 });
    expect(answer.details).toMatchObject({ status: 'failed' });
    await sleep(1500);
    expect(processesWith('100.4242')).toEqual([]);
  });

  it('scopes process sessions by agentId', async () => {
    await client.putSession('agent-a1', { agentId: 'shared-agent' });
    await client.putSession('agent-a2', { agentId: 'shared-agent' });
    const started = await post('agent-a1', 'shell/exec', { command: 'sleep 20', background: true });
    const id = String(started.details.sessionId);
    expect((await post('agent-a2', 'process', { action: 'list' })).text).toContain(id);
    expect((await post('loner', 'process', { action: 'list' })).text).toBe('No running or recent sessions.');
    await post('agent-a2', 'process', { action: 'kill', sessionId: id });
  });

  it('tells a wait given a shell session id to use process poll', async () => {
    const started = await post('sh5', 'shell/exec', { command: 'sleep 5', background: true });
    const id = String(started.details.sessionId);
    await sleep(200);
    expect(await client.wait('sh5', id)).toMatchObject({
      status: 'failed',
      error: `code mode run is unavailable or expired. ${id} is a shell process session: use process poll.`,
    });
    await post('sh5', 'process', { action: 'kill', sessionId: id });
  });

  it('records shell.started, shell.output and shell.exited in the session log', async () => {
    await post('sh6', 'shell/exec', { command: 'echo logged' });
    await sleep(300);
    const types = (await client.events('sh6')).events.map((e) => e.type).filter((t) => t.startsWith('shell.'));
    expect(types).toEqual(['shell.started', 'shell.output', 'shell.exited']);
  });

  it('leaves no process behind after the worker is stopped with background sessions running', async () => {
    await post('sh7', 'shell/exec', { command: "sh -c 'sleep 200.4343 & sleep 200.4343'", background: true });
    await sleep(300);
    expect(processesWith('200.4343').length).toBeGreaterThan(0);
    expect(await stack.workers[0].stop()).toBe(0);
    expect(processesWith('200.4343')).toEqual([]);
  });
});

import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from '../utils/test-stack';
import { describePids, eventually, hostPidsWith, killHostPids } from './tenancy-helpers';

/**
 * SPEC §10 "Redis storage": `DELETE /v1/sessions/{sid}` also removes the session's workspace on the
 * workers' disks and ends its shell processes, within seconds (the API's removal message, not the
 * sweep, which runs every 600 s here); another tenant's workspace of the same session id, and what
 * a link inside the deleted workspace points to, stay untouched. A worker that starts removes the
 * workspaces of sessions that are gone (a removal it missed while down) and keeps the others.
 */
jest.setTimeout(60_000);

const run = randomBytes(4).toString('hex');
const keys = { alpha: `wa-${run}`, beta: `wb-${run}` };
/** Unique on the host, so the process check sees only this file's command. */
const SLEEP_MARKER = `sleep ${randomInt(20_000, 29_999)}`;
const SID = 'ws';

let stack: TestStack;
let alpha: CodeModeClient;
let beta: CodeModeClient;
let outside: string;

beforeAll(async () => {
  outside = mkdtempSync(join(tmpdir(), 'workspace-removal-outside-'));
  stack = await TestStack.start({ apiKeys: `${keys.alpha}:alpha,${keys.beta}:beta` });
  alpha = stack.client(keys.alpha);
  beta = stack.client(keys.beta);
});

afterAll(async () => {
  killHostPids(SLEEP_MARKER);
  await stack?.stop();
  rmSync(outside, { recursive: true, force: true });
});

const workspace = (tenant: string) => join(stack.workspaceRoot, tenant, SID);

test('DELETE removes the session’s workspace and ends its shell processes; the other tenant’s workspace of the same sid stays', async () => {
  for (const client of [alpha, beta]) {
    const wrote = await client.shellExec(SID, { command: 'mkdir -p sub && echo mine > sub/f.txt && cat sub/f.txt' });
    expect(wrote.details).toMatchObject({ status: 'completed', aggregated: 'mine' });
  }
  const background = await alpha.shellExec(SID, { command: SLEEP_MARKER, background: true });
  expect(background.details).toMatchObject({ status: 'running' });
  expect(await eventually(() => hostPidsWith(SLEEP_MARKER).length > 0, 5_000)).toBe(true);
  writeFileSync(join(outside, 'precious.txt'), 'still here');
  symlinkSync(outside, join(workspace('alpha'), 'to-outside'));
  expect(existsSync(join(workspace('alpha'), 'sub', 'f.txt'))).toBe(true);

  const deleted = await alpha.raw('DELETE', `/v1/sessions/${SID}`);
  expect(deleted.status).toBe(200);
  expect(deleted.body).toMatchObject({ sessionId: SID, deleted: true });

  expect(await eventually(() => !existsSync(workspace('alpha')), 10_000)).toBe(true);
  const ended = await eventually(() => hostPidsWith(SLEEP_MARKER).length === 0, 10_000);
  // On a failure, what is left and what the worker said (CI saw a sandbox outlive a DELETE that came
  // during its setup, twice on a loaded machine, before the spawner killed its init at bubblewrap's exit).
  expect(ended ? 'ended' : `left: ${describePids(hostPidsWith(SLEEP_MARKER))}\n${stack.logs()}`).toBe('ended');
  // The ended process's exit is not logged: that append would have created the session again.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect((await alpha.raw('GET', `/v1/sessions/${SID}`)).status).toBe(404);
  expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('still here');
  // Beta's session of the same id: its workspace and its shell are untouched.
  expect(existsSync(join(workspace('beta'), 'sub', 'f.txt'))).toBe(true);
  const after = await beta.shellExec(SID, { command: 'cat sub/f.txt' });
  expect(after.details).toMatchObject({ status: 'completed', aggregated: 'mine' });
  expect((await stack.client().raw('GET', '/health/ready')).status).toBe(200);
});

test('a starting worker removes the workspaces of sessions that are gone and keeps those of live ones', async () => {
  const missed = join(stack.workspaceRoot, 'alpha', 'missed-while-down');
  mkdirSync(join(missed, 'sub'), { recursive: true });
  writeFileSync(join(missed, 'sub', 'f.txt'), 'stale');
  const live = await beta.shellExec('live', { command: 'echo live > f.txt && cat f.txt' });
  expect(live.details).toMatchObject({ status: 'completed', aggregated: 'live' });

  await stack.addWorker();

  expect(await eventually(() => !existsSync(missed), 10_000)).toBe(true);
  expect(readFileSync(join(stack.workspaceRoot, 'beta', 'live', 'f.txt'), 'utf8')).toBe('live\n');
  expect(existsSync(join(workspace('beta'), 'sub', 'f.txt'))).toBe(true);
});

test('a session made again under a deleted one’s id lists its own workspace, not the deleted one’s (a worker keeps roots open between calls)', async () => {
  const sid = 'again';
  const listed = async (): Promise<unknown> => {
    const result = await alpha.exec(sid, { title: 'list', code: 'return (await ls({})).entries' });
    expect(result.status).toBe('completed');
    return (result as { value?: unknown }).value;
  };
  expect((await alpha.shellExec(sid, { command: 'echo old > old.txt' })).details).toMatchObject({ status: 'completed' });
  expect(await listed()).toEqual(['old.txt']);

  expect((await alpha.raw('DELETE', `/v1/sessions/${sid}`)).status).toBe(200);
  expect(await eventually(() => !existsSync(join(stack.workspaceRoot, 'alpha', sid)), 10_000)).toBe(true);

  expect((await alpha.shellExec(sid, { command: 'echo new > new.txt' })).details).toMatchObject({ status: 'completed' });
  expect(await listed()).toEqual(['new.txt']);
});

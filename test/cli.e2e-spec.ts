import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeModeClient } from '@codemode/client';
import { freePort } from './utils/free-port';
import { deleteKeys, redisEnv, TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

const ROOT = join(__dirname, '..');
const MAIN = join(ROOT, 'dist/libs/client/src/cli/main.js');
const LAUNCHER = join(ROOT, 'scripts/codemode.js');
const START = join(ROOT, 'scripts/start.js');

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a child process, as a user would; never inherits CODEMODE_* from the test runner. */
function cli(args: string[], opts: { input?: string; entry?: string; onStdout?: (stdout: string) => void } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [opts.entry ?? MAIN, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      opts.onStdout?.(stdout);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** Event types of `codemode events` lines (`<id> <type> <runId?> <data>`), in order. */
const types = (stdout: string): string[] =>
  stdout
    .trim()
    .split('\n')
    .map((line) => line.split(' ')[1]);

describe('codemode CLI', () => {
  let stack: TestStack;
  let dir: string;
  let url: string[];

  beforeAll(async () => {
    stack = await TestStack.start();
    url = ['--url', stack.baseUrl];
    dir = mkdtempSync(join(tmpdir(), 'codemode-cli-'));
    writeFileSync(join(dir, 'yield.js'), 'console.log("before"); const r = await yield_control("pause"); console.log("after"); return 42;');
    writeFileSync(join(dir, 'boom.js'), 'throw new RangeError("boom");');
  });
  afterAll(async () => {
    await stack?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs a cell that yields, waits it to completion, and lists its events', async () => {
    const run = await cli(['exec', join(dir, 'yield.js'), ...url, '-s', 'cli-e2e']);
    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout).toBe('before\nafter\n42\n');
    expect(run.stderr).toMatch(/^waiting \(yield\): run cm_[0-9a-f-]+\n/);

    const listed = await cli(['events', 'cli-e2e', '--until', 'run.completed', ...url]);
    expect(listed.code).toBe(0);
    const order = types(listed.stdout);
    expect(order[0]).toBe('run.requested');
    expect(order.at(-1)).toBe('run.completed');
    for (const type of ['run.parked', 'run.resumed']) expect(order).toContain(type);
    expect(order.indexOf('run.parked')).toBeLessThan(order.indexOf('run.resumed'));
    expect(listed.stdout).toMatch(/^\d+-\d+ run\.requested cm_\S+ \{.*"title":"yield\.js"/);

    // --follow replays the log over SSE, and --until ends the tail at a new run.completed only
    // (SPEC §18): the one already in the log does not end it, the next run's does.
    const replaying = deferred();
    const tail = cli(['events', 'cli-e2e', '--follow', '--until', 'run.completed', ...url], {
      onStdout: (stdout) => {
        if (types(stdout).length >= order.length) replaying.resolve();
      },
    });
    // The tail has replayed the log, so it read where the log ended before this run was requested.
    await replaying.promise;
    const again = await cli(['exec', '-', '--title', 'again', ...url, '-s', 'cli-e2e'], { input: 'return 7;' });
    expect(again).toMatchObject({ code: 0, stdout: '7\n' });
    const followed = await tail;
    expect(followed.code).toBe(0);
    const replayed = types(followed.stdout);
    expect(replayed.slice(0, order.length)).toEqual(order);
    expect(replayed.slice(order.length).at(-1)).toBe('run.completed');
    expect(followed.stdout.trim().split('\n').at(-1)).toMatch(/"value":7/);
  });

  it('exits 3 on a cell waiting for the platform, saying how to answer, instead of waiting in a loop', async () => {
    const client = stack.client();
    await client.putTools('cli-platform', [{ name: 'ask', description: 'answered by the platform' }]);
    const started = Date.now();
    const asked = await cli(['exec', '-', '--title', 'ask', ...url, '-s', 'cli-platform'], {
      input: 'const a = await ask({ q: 1 }); return a.n + 1;',
    });
    expect(asked.code).toBe(3);
    expect(Date.now() - started).toBeLessThan(10_000);
    const runId = /run (cm_\S+)/.exec(asked.stderr)?.[1];
    expect(asked.stderr).toBe(
      `waiting (pending_tools): run ${runId}\n` +
        '  pending bridge:callValue:1 ask {"q":1}\n' +
        `run ${runId} waits for the platform's answers to the calls above; waiting again would answer the same.\n` +
        `Answer them with POST /v1/sessions/cli-platform/runs/${runId}/tool-results, e.g.\n` +
        '  {"results":[{"id":"bridge:callValue:1","ok":true,"value":<the tool\'s answer>}]}\n' +
        `  ({"id":…,"ok":false,"error":"<message>"} for a failure), then resume with: codemode wait ${runId} -s cli-platform\n`,
    );
    // The CLI called no wait: the run was never resumed.
    const logged = await cli(['events', 'cli-platform', ...url]);
    expect(types(logged.stdout)).not.toContain('run.resumed');
    expect(types(logged.stdout)).not.toContain('run.waited');

    await client.toolResults('cli-platform', runId!, [{ id: 'bridge:callValue:1', ok: true, value: { n: 41 } }]);
    const resumed = await cli(['wait', runId!, ...url, '-s', 'cli-platform']);
    expect(resumed).toMatchObject({ code: 0, stdout: '42\n' });
  });

  it('tails events live while a parked run is resumed with --no-wait and wait', async () => {
    const client = stack.client();
    await client.putSession('cli-live', {});
    const tail = cli(['events', 'cli-live', '-f', '--until', 'run.completed', ...url]);

    const parked = await cli(['exec', '-', '--no-wait', '--title', 'live', ...url, '-s', 'cli-live'], {
      input: 'console.log("one"); await yield_control(); return { two: 2 };',
    });
    expect(parked.code).toBe(0);
    const runId = parked.stdout.trim().split('\n').at(-1)!;
    expect(parked.stdout).toBe(`one\n${runId}\n`);
    expect(runId).toMatch(/^cm_/);

    const waited = await cli(['wait', runId, ...url, '-s', 'cli-live', '--json']);
    expect(waited.code).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: 'completed', value: { two: 2 } });

    const tailed = await tail;
    expect(tailed.code).toBe(0);
    const order = types(tailed.stdout);
    expect(order).toEqual(expect.arrayContaining(['session.configured', 'run.requested', 'run.parked', 'run.resumed', 'run.completed']));
    expect(order.at(-1)).toBe('run.completed');
  });

  it('ends a live tail cleanly on Ctrl-C', async () => {
    const child = spawn(process.execPath, [MAIN, 'events', 'cli-e2e', '--follow', ...url], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('run.completed')) resolve();
      }),
    );
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('exits 1 for a failed cell, an HTTP error, or an unreachable API', async () => {
    const failed = await cli(['exec', join(dir, 'boom.js'), ...url, '-s', 'cli-fail']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^error \(\w+, guest\): RangeError: boom/);

    const unknownRun = await cli(['wait', 'cm_00000000-0000-4000-8000-000000000000', ...url, '-s', 'cli-fail']);
    expect(unknownRun.code).toBe(1);
    expect(unknownRun.stderr).toContain('code mode run is unavailable or expired.');

    const missing = await cli(['events', 'never-created', ...url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('HTTP 404');

    const unreachable = await cli(['events', 'cli-e2e', '--url', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the Code Mode API at http://127.0.0.1:9: ');
  });

  it('exits 2 with the usage on a usage error', async () => {
    for (const args of [['frobnicate'], ['exec'], ['events', 's1', '--bogus'], ['shell', 's1']]) {
      const run = await cli(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('Usage: codemode <command>');
    }
    const help = await cli(['--help'], { entry: LAUNCHER });
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: codemode <command>') });
  });

  it('runs shell commands with the exit status mapped to 0/1', async () => {
    const ok = await cli(['shell', 'cli-sh', ...url, '--', 'echo', 'hello']);
    expect(ok).toMatchObject({ code: 0, stdout: 'hello\n' });
    const bad = await cli(['shell', 'cli-sh', ...url, '--', 'echo oops; exit 3']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('(Command exited with code 3)');
    const bg = await cli(['shell', 'cli-sh', '--background', ...url, '--', 'sleep', '1']);
    expect(bg.code).toBe(0);
    expect(bg.stdout).toMatch(/^Command still running \(session \S+, pid \d+\)/);
  });

  it('puts and gets client tools', async () => {
    const file = join(dir, 'tools.json');
    writeFileSync(file, JSON.stringify({ tools: [{ name: 'lookup_order', description: 'Finds an order by id.' }] }));
    const put = await cli(['tools', 'put', 'cli-tools', file, ...url]);
    expect(put.code).toBe(0);
    expect(put.stdout).toMatch(/lookup_order\s+client\s+Finds an order by id\./);
    const got = await cli(['tools', 'get', 'cli-tools', '--json', ...url]);
    expect(got).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(got.stdout).catalog).toEqual(
      expect.arrayContaining([expect.objectContaining({ toolName: 'lookup_order', source: 'client' })]),
    );
  });
});

describe('npm start on Ctrl-C', () => {
  it('gives each app one signal: a running cell completes and both apps drain and exit cleanly', async () => {
    const prefix = `tctrlc${Date.now().toString(36)}`;
    const port = await freePort();
    const env = {
      ...process.env,
      PORT: String(port),
      WORKER_METRICS_PORT: String(await freePort()),
      CODEMODE_KEY_PREFIX: prefix,
      ...redisEnv(),
      LOG_LEVEL: 'info',
    };
    // A process group of its own, as a terminal runs a foreground command; Ctrl-C signals the whole group.
    const launcher = spawn(process.execPath, [START], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let logs = '';
    launcher.stdout.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    launcher.stderr.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => launcher.on('exit', (code) => resolve(code)));
    try {
      const client = new CodeModeClient({ baseUrl: `http://127.0.0.1:${port}` });
      // Both apps up and serving: a loaded CI machine can take a while to start them.
      let ready: unknown;
      const readyBy = Date.now() + 60_000;
      while ((ready as { status?: string } | undefined)?.status !== 'completed' && Date.now() < readyBy) {
        ready = await client.exec('ctrl-c', { title: 'up', code: 'return 1' }).catch(() => undefined);
        if ((ready as { status?: string } | undefined)?.status !== 'completed') await new Promise((r) => setTimeout(r, 100));
      }
      expect(ready).toMatchObject({ status: 'completed', value: 1 });
      const running = client.exec('ctrl-c', { title: 'slow', code: 'await new Promise(r => setTimeout(r, 1500)); return "drained";' });
      await new Promise((r) => setTimeout(r, 400));
      process.kill(-launcher.pid!, 'SIGINT');
      expect(await running).toMatchObject({ status: 'completed', value: 'drained' });
      expect(await exited).toBe(0);
      const said = (msg: string): string[] =>
        logs
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { service?: string; msg?: string })
          .filter((line) => line.msg === msg)
          .map((line) => line.service ?? '')
          .sort();
      expect(said('shutting down: draining work')).toEqual(['codemode-api', 'codemode-worker']);
      expect(said('second signal during shutdown; exiting now')).toEqual([]);
      expect(said('shut down cleanly')).toEqual(['codemode-api', 'codemode-worker']);
    } finally {
      // The apps run in their own process groups: a repeated signal reaches them through the launcher.
      for (let i = 0; i < 3 && launcher.exitCode === null; i += 1) {
        launcher.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 1100))]);
      }
      await deleteKeys(prefix);
    }
  });
});

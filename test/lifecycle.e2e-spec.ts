import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { CodeModeClient } from '@codemode/client';
import { freePort } from './utils/free-port';
import { deleteKeys, redisEnv, TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

describe('worker lifecycle', () => {
  let stack: TestStack;
  let blocker: Server;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0 });
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    blocker?.close();
    await stack?.stop();
  });

  it('keeps working when its health port is taken, and says so', async () => {
    const address = blocker.address();
    const takenPort = typeof address === 'object' && address ? address.port : 0;
    const running = stack.spawnWorker({ WORKER_METRICS_PORT: String(takenPort) });
    const client = stack.client();
    let result = await client.exec('taken', { title: 't', code: 'return 7' });
    for (let i = 0; i < 40 && result.status !== 'completed'; i += 1) result = await client.exec('taken', { title: 't', code: 'return 7' });
    expect(result).toMatchObject({ status: 'completed', value: 7 });
    expect(running.alive).toBe(true);
    expect(running.logs()).toMatch(/worker health\/metrics port unavailable; continuing without it/);
    expect(await running.stop()).toBe(0);
  });

  it('finishes a running cell on SIGTERM, then exits 0', async () => {
    const worker = await stack.addWorker();
    const client = stack.client();
    const pending = client.exec('term', { title: 't', code: 'await new Promise(r => setTimeout(r, 700)); return "done";' });
    await new Promise((r) => setTimeout(r, 200));
    const exit = worker.stop();
    expect(await pending).toMatchObject({ status: 'completed', value: 'done' });
    expect(await exit).toBe(0);
  });

  it('finishes on SIGTERM a cell that gave its slot back while it waits on a timer (SPEC §10), then exits 0', async () => {
    const worker = await stack.addWorker();
    const client = stack.client();
    const pending = client.exec('term-idle', { title: 't', code: 'await new Promise(r => setTimeout(r, 3000)); return "done";' });
    // Past the second of waiting after which its job leaves the consumer's count.
    await new Promise((r) => setTimeout(r, 2000));
    const exit = worker.stop();
    expect(await pending).toMatchObject({ status: 'completed', value: 'done' });
    expect(await exit).toBe(0);
    const events = (await client.events('term-idle')).events.map((e) => e.type);
    expect(events.filter((type) => type.startsWith('run.'))).toEqual(['run.requested', 'run.started', 'run.completed']);
  });

  it('hands runs parked in a worker that shuts down over; another worker finishes them (SPEC §12)', async () => {
    const worker = await stack.addWorker();
    const client = stack.client();
    const parked = await client.exec('lost', { title: 'y', code: 'const kept = 1; await yield_control(); return kept;' });
    expect(parked.status).toBe('waiting');
    expect(await worker.stop()).toBe(0);
    const runId = parked.status === 'waiting' ? parked.runId : '';
    const events = (await client.events('lost')).events.filter((e) => e.runId === runId);
    expect(events.map((e) => e.type)).toEqual(['run.requested', 'run.started', 'run.parked', 'run.released']);
    expect(events[3].data).toMatchObject({ reason: 'the worker holding the parked cell shut down' });
    await stack.addWorker();
    expect(await client.wait('lost', runId)).toMatchObject({ status: 'completed', value: 1 });
  });
});

describe('npm start (the README command)', () => {
  it('serves the README example from API + worker started by one command, and stops on SIGTERM', async () => {
    const prefix = `tstart${Date.now().toString(36)}`;
    const port = await freePort();
    const child = spawn(process.execPath, [join(__dirname, '..', 'scripts', 'start.js')], {
      env: {
        ...process.env,
        PORT: String(port),
        WORKER_METRICS_PORT: String(await freePort()),
        CODEMODE_KEY_PREFIX: prefix,
        ...redisEnv(),
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
    try {
      const client = new CodeModeClient({ baseUrl: `http://127.0.0.1:${port}` });
      let result: unknown;
      for (let i = 0; i < 200 && result === undefined; i += 1) {
        result = await client.exec('s1', { title: 'add', code: 'return 1+1' }).catch(() => undefined);
        if (result === undefined) await new Promise((r) => setTimeout(r, 100));
      }
      // objectContaining, not toMatchObject: a failed answer is printed whole (its error says why).
      expect(result).toEqual(expect.objectContaining({ status: 'completed', value: 2 }));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await deleteKeys(prefix);
    }
  });
});

describe('npm run start:api / start:worker (one process each, as in production)', () => {
  it('serve the README example together and stop on SIGTERM', async () => {
    const prefix = `tsplit${Date.now().toString(36)}`;
    const port = await freePort();
    const env = {
      ...process.env,
      PORT: String(port),
      WORKER_METRICS_PORT: String(await freePort()),
      CODEMODE_KEY_PREFIX: prefix,
      ...redisEnv(),
      LOG_LEVEL: 'warn',
    };
    const script = join(__dirname, '..', 'scripts', 'start.js');
    const api = spawn(process.execPath, [script, 'api'], { env, stdio: 'ignore' });
    const worker = spawn(process.execPath, [script, 'worker'], { env, stdio: 'ignore' });
    try {
      const client = new CodeModeClient({ baseUrl: `http://127.0.0.1:${port}` });
      let result: unknown;
      for (let i = 0; i < 200 && (result as { status?: string } | undefined)?.status !== 'completed'; i += 1) {
        result = await client.exec('s1', { title: 'add', code: 'return 1+1' }).catch(() => undefined);
        if ((result as { status?: string } | undefined)?.status !== 'completed') await new Promise((r) => setTimeout(r, 100));
      }
      // objectContaining, not toMatchObject: a failed answer is printed whole (its error says why).
      expect(result).toEqual(expect.objectContaining({ status: 'completed', value: 2 }));
      const exits = [api, worker].map((child) => new Promise<number | null>((resolve) => child.on('exit', resolve)));
      api.kill('SIGTERM');
      worker.kill('SIGTERM');
      expect(await Promise.all(exits)).toEqual([0, 0]);
    } finally {
      for (const child of [api, worker]) if (child.exitCode === null) child.kill('SIGKILL');
      await deleteKeys(prefix);
    }
  });
});

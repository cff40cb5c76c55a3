import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Event } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { verifyWebhookSignature } from '@codemode/tools';
import { TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

const SECRET = 'shell-notify-secret';

interface Answer {
  text: string;
  details: Record<string, unknown>;
}

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback receiver that records every POST and answers each path with the statuses queued for it (then 200). */
class Receiver {
  readonly received: Received[] = [];
  private readonly statuses = new Map<string, number[]>();
  private constructor(private readonly server: Server) {}

  static async start(): Promise<Receiver> {
    const server = createServer();
    const receiver = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '';
        receiver.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.statusCode = receiver.statuses.get(path)?.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  answer(path: string, statuses: number[]): void {
    this.statuses.set(path, statuses);
  }

  at(path: string): Received[] {
    return this.received.filter((request) => request.path === path);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('shell exit notifications (SPEC §7)', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  let receiver: Receiver;

  const put = (sid: string, body: unknown) =>
    client.raw('PUT', `/v1/sessions/${sid}`, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const exec = async (sid: string, body: unknown): Promise<Answer> => {
    const res = await client.raw('POST', `/v1/sessions/${sid}/shell/exec`, {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    return res.body as Answer;
  };
  const events = async (sid: string): Promise<Event[]> => (await client.events(sid, { limit: 1000 })).events;
  /** The session's events once one of `type` for shell session `id` is in them. */
  async function eventsOnce(sid: string, type: string, id: string): Promise<Event[]> {
    for (let i = 0; i < 300; i += 1) {
      const all = await events(sid);
      if (all.some((e) => e.type === type && e.data.sessionId === id)) return all;
      await sleep(50);
    }
    throw new Error(`no ${type} for ${id} in session ${sid}`);
  }
  const notified = (all: Event[], id: string) => all.filter((e) => e.type === 'shell.notified' && e.data.sessionId === id);

  beforeAll(async () => {
    receiver = await Receiver.start();
    // Single-tenant development mode: loopback (the receiver) may be reached; tenant `default`.
    stack = await TestStack.start({ env: { CODEMODE_WEBHOOK_SECRETS: `default:${SECRET}` } });
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  it('POSTs one signed notification when a background command exits, and logs shell.notified', async () => {
    const path = '/exits/bg';
    const put1 = await put('nt1', { agentId: 'agent-n', notifyUrl: receiver.url(path) });
    expect(put1.status).toBe(200);
    expect(put1.body).toMatchObject({ notifyUrl: receiver.url(path), shell: { notifyOnExit: true, notifyOnExitEmptySuccess: false } });
    expect((await client.raw('GET', '/v1/sessions/nt1')).body).toMatchObject({ notifyUrl: receiver.url(path) });

    const started = await exec('nt1', { command: 'echo first; echo second >&2; exit 3', background: true });
    const id = String(started.details.sessionId);
    const all = await eventsOnce('nt1', 'shell.notified', id);
    expect(notified(all, id).map((e) => e.data)).toEqual([
      { sessionId: id, scope: 'default/agent:agent-n', status: 'delivered', attempts: 1, httpStatus: 200 },
    ]);
    const [request, ...more] = receiver.at(path);
    expect(more).toEqual([]);
    const listed = await client.raw('POST', '/v1/sessions/nt1/process', {
      body: JSON.stringify({ action: 'list' }),
      headers: { 'content-type': 'application/json' },
    });
    const session = ((listed.body as Answer).details.sessions as { sessionId: string; tail: string }[]).find((s) => s.sessionId === id);
    expect(JSON.parse(request.body)).toEqual({
      sessionId: 'nt1',
      agentId: 'agent-n',
      processSessionId: id,
      status: 'completed',
      exitCode: 3,
      tail: session?.tail,
    });
    expect(session?.tail).toContain('first');
    expect(request.headers['content-type']).toBe('application/json');
    const signed = {
      body: request.body,
      timestamp: request.headers['x-codemode-timestamp'] as string,
      signature: request.headers['x-codemode-signature'] as string,
    };
    expect(verifyWebhookSignature({ secret: SECRET, ...signed })).toBe(true);
    expect(verifyWebhookSignature({ secret: 'another-secret', ...signed })).toBe(false);
  });

  it('notifies a command that yielded and came back running, with its signal; never a foreground one', async () => {
    const path = '/exits/yield';
    expect((await put('nt2', { notifyUrl: receiver.url(path) })).status).toBe(200);
    const foreground = await exec('nt2', { command: 'echo fg' });
    expect(foreground.details.status).toBe('completed');
    const yielded = await exec('nt2', { command: 'echo up; sleep 30', yieldMs: 200 });
    expect(yielded.details.status).toBe('running');
    const id = String(yielded.details.sessionId);
    await client.raw('POST', '/v1/sessions/nt2/process', {
      body: JSON.stringify({ action: 'kill', sessionId: id }),
      headers: { 'content-type': 'application/json' },
    });
    await eventsOnce('nt2', 'shell.notified', id);
    const bodies = receiver.at(path).map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(bodies).toEqual([
      { sessionId: 'nt2', agentId: null, processSessionId: id, status: 'failed', exitCode: null, exitSignal: 'SIGTERM', tail: 'up\n' },
    ]);
  });

  it('skips an empty successful exit by default, and notifies it with notifyOnExitEmptySuccess', async () => {
    const path = '/exits/empty';
    expect((await put('nt3', { notifyUrl: receiver.url(path) })).status).toBe(200);
    const quiet = String((await exec('nt3', { command: 'true', background: true })).details.sessionId);
    await eventsOnce('nt3', 'shell.exited', quiet);
    await sleep(1000);
    expect(notified(await events('nt3'), quiet)).toEqual([]);
    expect(receiver.at(path)).toEqual([]);

    const on = await put('nt3', { shell: { notifyOnExitEmptySuccess: true } });
    expect(on.body).toMatchObject({ notifyUrl: receiver.url(path), shell: { notifyOnExit: true, notifyOnExitEmptySuccess: true } });
    const told = String((await exec('nt3', { command: 'true', background: true })).details.sessionId);
    await eventsOnce('nt3', 'shell.notified', told);
    expect(receiver.at(path).map((r) => JSON.parse(r.body) as unknown)).toEqual([
      { sessionId: 'nt3', agentId: null, processSessionId: told, status: 'completed', exitCode: 0, tail: '' },
    ]);
  });

  it('retries an endpoint answering 500 twice, delivering on attempt 3', async () => {
    const path = '/exits/flaky';
    receiver.answer(path, [500, 500]);
    expect((await put('nt4', { notifyUrl: receiver.url(path) })).status).toBe(200);
    const id = String((await exec('nt4', { command: 'echo flaky', background: true })).details.sessionId);
    const all = await eventsOnce('nt4', 'shell.notified', id);
    expect(notified(all, id).map((e) => e.data)).toEqual([
      { sessionId: id, scope: 'default/session:nt4', status: 'delivered', attempts: 3, httpStatus: 200 },
    ]);
    const requests = receiver.at(path);
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
  });

  it('sends nothing with notifyOnExit off, nor after notifyUrl is cleared', async () => {
    const path = '/exits/off';
    expect((await put('nt5', { notifyUrl: receiver.url(path), shell: { notifyOnExit: false } })).status).toBe(200);
    const off = String((await exec('nt5', { command: 'echo off', background: true })).details.sessionId);
    await eventsOnce('nt5', 'shell.exited', off);

    const cleared = await put('nt5', { notifyUrl: null, shell: { notifyOnExit: true } });
    expect(cleared.body).toMatchObject({ notifyUrl: null, shell: { notifyOnExit: true } });
    const none = String((await exec('nt5', { command: 'echo none', background: true })).details.sessionId);
    await eventsOnce('nt5', 'shell.exited', none);
    await sleep(1000);
    expect(receiver.at(path)).toEqual([]);
    expect((await events('nt5')).filter((e) => e.type === 'shell.notified')).toEqual([]);
  });

  it('refuses a notifyUrl the webhook address rules refuse, or that is not http(s), storing nothing', async () => {
    expect((await put('nt6', { notifyUrl: receiver.url('/kept') })).status).toBe(200);
    const refused = await put('nt6', { notifyUrl: 'http://10.1.2.3:8080/hook', agentId: 'not-stored' });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error:
        'notifyUrl: http://10.1.2.3:8080 is a private address (10.1.2.3), which webhooks may not reach; allow it with CODEMODE_WEBHOOK_ALLOW.',
      code: 'invalid_input',
      details: { field: 'notifyUrl', address: '10.1.2.3', addressClass: 'private' },
    });
    const notHttp = await put('nt6', { notifyUrl: 'ftp://files.example/x' });
    expect(notHttp.status).toBe(400);
    expect(notHttp.body).toMatchObject({ error: 'notifyUrl: endpoint must be an http or https URL', code: 'invalid_input' });
    expect((await client.raw('GET', '/v1/sessions/nt6')).body).toMatchObject({ agentId: null, notifyUrl: receiver.url('/kept') });
  });
});

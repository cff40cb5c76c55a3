import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebhookAddressPolicy, WebhookAllowList, type HostResolver, type ResolvedAddress } from './address-policy';
import { pinnedLookup } from './pinned-lookup';
import { WebhookAddressRefusedError } from './webhook-address-errors';
import { callWebhookTool } from './webhook-caller';

/**
 * The connect-time half of SPEC §10's address rules: the address the request dials is the one
 * checked. Every server here listens on loopback; nothing is ever sent off this machine.
 */

const body = { input: {}, callId: 'bridge:callValue:1', runId: 'cm_1', sessionId: 's1' };

function listen(host: string, port = 0): Promise<{ server: Server; port: number; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ servedBy: host }));
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve({ server, port: (server.address() as AddressInfo).port, seen }));
  });
}

const close = (server: Server | TlsServer) => new Promise((resolve) => server.close(resolve));

/** Answers `answers[n]` on its n-th call (the last one after that), and counts calls. */
function changingResolver(...answers: string[][]): { resolve: HostResolver; calls: () => number } {
  let calls = 0;
  const resolve = (): Promise<ResolvedAddress[]> => {
    const answer = answers[Math.min(calls, answers.length - 1)];
    calls += 1;
    return Promise.resolve(answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
  return { resolve, calls: () => calls };
}

describe('pinnedLookup', () => {
  const lookup = pinnedLookup([
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ]);
  const ask = (options: Parameters<typeof lookup>[1]) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) =>
      lookup('rebound.example', options, (error, address, family) => resolve({ error, address, family })),
    );

  it('answers only with the checked addresses, whatever the name, in each calling convention', async () => {
    await expect(ask({})).resolves.toMatchObject({ error: null, address: '127.0.0.1', family: 4 });
    await expect(ask({ family: 6 })).resolves.toMatchObject({ error: null, address: '::1', family: 6 });
    await expect(ask({ all: true })).resolves.toMatchObject({
      address: [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
    });
    await expect(ask({ all: true, family: 'IPv4' })).resolves.toMatchObject({ address: [{ address: '127.0.0.1', family: 4 }] });
  });

  it('fails rather than resolve when no checked address fits the family', async () => {
    const only4 = pinnedLookup([{ address: '127.0.0.1', family: 4 }]);
    const error = await new Promise((resolve) => only4('x', { family: 6 }, (err) => resolve(err)));
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('callWebhookTool: the connect-time check', () => {
  let good: Awaited<ReturnType<typeof listen>>;
  let other: Awaited<ReturnType<typeof listen>> | undefined;

  beforeAll(async () => {
    good = await listen('127.0.0.1');
    // Where a rebinding answer would send the request: same port, another loopback address.
    other = await listen('127.0.0.2', good.port).catch(() => undefined);
  });
  afterAll(async () => {
    await close(good.server);
    if (other) await close(other.server);
  });

  it('dials the address it checked, even when the name answers differently afterwards', async () => {
    const { resolve, calls } = changingResolver(['127.0.0.1'], ['127.0.0.2'], ['127.0.0.2']);
    const policy = new WebhookAddressPolicy(new WebhookAllowList(['127.0.0.1']), 'multi');
    const before = good.seen.length;
    await expect(
      callWebhookTool({
        toolName: 'pinned',
        callableName: 'pinned',
        endpoint: `http://rebind.test:${good.port}/hook`,
        addressPolicy: policy,
        resolve,
        body,
      }),
    ).resolves.toEqual({ servedBy: '127.0.0.1' });
    expect(calls()).toBe(1);
    expect(good.seen.length).toBe(before + 1);
    expect(good.seen.at(-1)?.headers.host).toBe(`rebind.test:${good.port}`);
    expect(other?.seen ?? []).toEqual([]);
  });

  it('refuses, without sending anything, a name whose answer is a refused address', async () => {
    const { resolve } = changingResolver(['93.184.215.14', '127.0.0.1']);
    const policy = new WebhookAddressPolicy(new WebhookAllowList(), 'multi');
    const before = good.seen.length;
    const error = (await callWebhookTool({
      toolName: 'sneaky',
      callableName: 'sneaky',
      endpoint: `http://rebind.test:${good.port}/hook?token=t0k`,
      addressPolicy: policy,
      resolve,
      body,
    }).catch((caught: unknown) => caught)) as WebhookAddressRefusedError;
    expect(error).toBeInstanceOf(WebhookAddressRefusedError);
    expect(error).toMatchObject({ code: 'webhook_address_refused', refusal: { address: '127.0.0.1', addressClass: 'loopback' } });
    expect(error.message).toBe(
      "webhook tool sneaky may not call its endpoint: its host resolves to a loopback address (127.0.0.1), which client tools may not reach; the deployment's CODEMODE_WEBHOOK_ALLOW can exempt it.",
    );
    expect(error.message).not.toContain('rebind.test');
    expect(error.message).not.toContain('t0k');
    expect(good.seen.length).toBe(before);
  });

  it('refuses literal addresses in multi mode and allows loopback in single mode', async () => {
    const multi = new WebhookAddressPolicy(new WebhookAllowList(), 'multi');
    const single = new WebhookAddressPolicy(new WebhookAllowList(), 'single');
    const endpoint = `http://[::ffff:127.0.0.1]:${good.port}/hook`;
    await expect(callWebhookTool({ toolName: 'lit', callableName: 'lit', endpoint, addressPolicy: multi, body })).rejects.toMatchObject({
      message: expect.stringContaining('its host is a loopback address (::ffff:7f00:1)'),
    });
    await expect(callWebhookTool({ toolName: 'lit', callableName: 'lit', endpoint, addressPolicy: single, body })).resolves.toEqual({
      servedBy: '127.0.0.1',
    });
    await expect(
      callWebhookTool({ toolName: 'lit', callableName: 'lit', endpoint: 'http://10.0.0.5/', addressPolicy: single, body }),
    ).rejects.toMatchObject({
      refusal: { addressClass: 'private' },
    });
  });

  it('reports a name that does not resolve as unreachable', async () => {
    const resolve: HostResolver = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    const policy = new WebhookAddressPolicy(new WebhookAllowList(), 'multi');
    await expect(
      callWebhookTool({ toolName: 'gone', callableName: 'gone', endpoint: 'https://gone.invalid/', addressPolicy: policy, resolve, body }),
    ).rejects.toMatchObject({
      code: 'webhook_unreachable',
      message: 'webhook tool gone could not reach its endpoint (ENOTFOUND); check that the endpoint is up and reachable from the worker.',
    });
  });
});

const haveOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

(haveOpenssl ? describe : describe.skip)('callWebhookTool over https with a pinned address', () => {
  let dir: string;
  let server: TlsServer;
  let port: number;
  const serverNames: (string | false)[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        '/CN=hooks.test',
        '-days',
        '1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      {
        stdio: 'ignore',
      },
    );
    server = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (socket) =>
      socket.end(),
    );
    // The client refuses the self-signed certificate after sending its hello: the server sees
    // the handshake fail, with the SNI the client sent.
    server.on('tlsClientError', (_error, socket) => serverNames.push((socket as unknown as { servername: string | false }).servername));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await close(server);
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the endpoint name as SNI while dialing the checked address', async () => {
    const { resolve, calls } = changingResolver(['127.0.0.1']);
    const policy = new WebhookAddressPolicy(new WebhookAllowList(['hooks.test']), 'multi');
    await expect(
      callWebhookTool({
        toolName: 'tls',
        callableName: 'tls',
        endpoint: `https://hooks.test:${port}/hook`,
        addressPolicy: policy,
        resolve,
        body,
      }),
    ).rejects.toMatchObject({
      code: 'webhook_unreachable',
      message: expect.stringContaining('SELF_SIGNED'),
    });
    expect(calls()).toBe(1);
    for (let i = 0; i < 40 && serverNames.length === 0; i += 1) await new Promise((r) => setTimeout(r, 25));
    expect(serverNames).toEqual(['hooks.test']);
  });
});

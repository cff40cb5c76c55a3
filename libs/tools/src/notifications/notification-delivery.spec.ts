import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookAddressPolicy, WebhookAllowList } from '../webhook/address-policy';
import { backoffMs, deliverNotification, NOTIFICATION_MAX_ATTEMPTS, shouldRetry, type NotificationDelivery } from './notification-delivery';
import { verifyWebhookSignature } from '../webhook/signature';

/** Development mode: loopback (these tests' own server) may be reached. */
const LOOPBACK_OK = new WebhookAddressPolicy(new WebhookAllowList(), 'single');
const MULTI = new WebhookAddressPolicy(new WebhookAllowList(), 'multi');

describe('shouldRetry and backoffMs', () => {
  it('retries network errors, 5xx and 429; not 2xx, 3xx or other 4xx', () => {
    expect(shouldRetry({ error: 'could not reach it (ECONNREFUSED)' })).toBe(true);
    for (const status of [500, 502, 503, 599, 429]) expect(shouldRetry({ httpStatus: status })).toBe(true);
    for (const status of [200, 204, 301, 400, 401, 404, 410, 499]) expect(shouldRetry({ httpStatus: status })).toBe(false);
  });

  it('doubles from 500 ms up to 8 s, within ±20 %', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffMs(attempt, () => 0.5))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect(backoffMs(1, () => 0)).toBe(400);
    expect(backoffMs(1, () => 1)).toBe(600);
  });
});

describe('deliverNotification', () => {
  let server: Server;
  let url: string;
  let answers: number[];
  let seen: { headers: IncomingMessage['headers']; body: string }[];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const status = answers.shift() ?? 200;
        if (status === 0) return req.socket.destroy();
        res.writeHead(status, { location: 'http://elsewhere.example/' });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/exits`;
  });
  beforeEach(() => {
    answers = [];
    seen = [];
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const deliver = (over: Partial<NotificationDelivery> = {}) =>
    deliverNotification({
      url,
      body: { processSessionId: 'warm-otter' },
      addressPolicy: LOOPBACK_OK,
      secret: 's3cret',
      backoff: () => 5,
      ...over,
    });

  it('POSTs the JSON body signed as tool webhooks are', async () => {
    expect(await deliver()).toEqual({ status: 'delivered', attempts: 1, httpStatus: 200 });
    expect(seen).toHaveLength(1);
    const [{ headers, body }] = seen;
    expect(JSON.parse(body)).toEqual({ processSessionId: 'warm-otter' });
    expect(headers['content-type']).toBe('application/json');
    const signed = { body, timestamp: headers['x-codemode-timestamp'] as string, signature: headers['x-codemode-signature'] as string };
    expect(verifyWebhookSignature({ secret: 's3cret', ...signed })).toBe(true);
    expect(verifyWebhookSignature({ secret: 'other', ...signed })).toBe(false);
  });

  it('sends no signature header without a secret', async () => {
    await deliver({ secret: undefined });
    expect(seen[0].headers['x-codemode-signature']).toBeUndefined();
    expect(seen[0].headers['x-codemode-timestamp']).toMatch(/^\d+$/);
  });

  it('retries 5xx, 429 and dropped connections, then delivers', async () => {
    answers = [500, 429, 0, 503];
    expect(await deliver()).toEqual({ status: 'delivered', attempts: 5, httpStatus: 200 });
    expect(seen).toHaveLength(5);
  });

  it('gives up after 5 tries in all', async () => {
    answers = [500, 500, 500, 500, 500, 500];
    expect(await deliver()).toEqual({ status: 'failed', attempts: NOTIFICATION_MAX_ATTEMPTS, httpStatus: 500, error: 'HTTP 500' });
    expect(seen).toHaveLength(5);
  });

  it('does not retry other 4xx, nor follow a redirect', async () => {
    answers = [404];
    expect(await deliver()).toEqual({ status: 'failed', attempts: 1, httpStatus: 404, error: 'HTTP 404' });
    answers = [302];
    expect(await deliver()).toEqual({ status: 'failed', attempts: 1, httpStatus: 302, error: 'HTTP 302; redirects are not followed' });
    expect(seen).toHaveLength(2);
  });

  it('sends nothing to an address the rules refuse, checked when dialed', async () => {
    expect(await deliver({ addressPolicy: MULTI })).toEqual({
      status: 'failed',
      attempts: 0,
      error: 'its host is a loopback address (127.0.0.1), which webhooks may not reach',
    });
    // A name that resolves to loopback at dial time (DNS rebinding after the PUT's check).
    const rebound = await deliver({
      url: url.replace('127.0.0.1', 'hooks.example'),
      addressPolicy: MULTI,
      resolve: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
    });
    expect(rebound).toEqual({
      status: 'failed',
      attempts: 0,
      error: 'its host resolves to a loopback address (127.0.0.1), which webhooks may not reach',
    });
    expect(seen).toHaveLength(0);
  });

  it('retries an unreachable endpoint and says why, without the URL', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await deliver({ url: `http://127.0.0.1:${port}/` });
    expect(outcome).toEqual({ status: 'failed', attempts: 5, error: 'could not reach it (ECONNREFUSED)' });
  });

  it('stops when its signal aborts', async () => {
    answers = [500, 500, 500, 500, 500];
    const stop = new AbortController();
    const outcome = deliver({ signal: stop.signal, backoff: () => 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop.abort();
    expect(await outcome).toEqual({ status: 'failed', attempts: 1, httpStatus: 500, error: 'the worker stopped before it was delivered' });
  });
});

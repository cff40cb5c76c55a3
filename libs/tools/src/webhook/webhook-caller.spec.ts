import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookAddressPolicy, WebhookAllowList } from './address-policy';
import { callWebhookTool, type WebhookCallOptions } from './webhook-caller';
import { verifyWebhookSignature } from './signature';

/** Development mode: loopback endpoints (these tests' local servers) may be called. */
const LOOPBACK_OK = new WebhookAddressPolicy(new WebhookAllowList(), 'single');

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

describe('callWebhookTool', () => {
  let server: Server;
  let baseUrl: string;
  let handler: Handler;
  const body = { input: { id: 7 }, callId: 'bridge:callValue:1', runId: 'cm_1', sessionId: 's1' };
  const call = (path: string, extra: Partial<WebhookCallOptions> = {}) =>
    callWebhookTool({
      toolName: 'lookup',
      callableName: 'lookup_2',
      endpoint: `${baseUrl}${path}`,
      addressPolicy: LOOPBACK_OK,
      secret: 'tenant-secret',
      body,
      ...extra,
    });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const reply =
    (status: number, text: string, type = 'application/json'): Handler =>
    (_req, _body, res) => {
      res.writeHead(status, { 'content-type': type });
      res.end(text);
    };

  it('POSTs the signed JSON body and returns the JSON answer', async () => {
    let seen: { headers: IncomingMessage['headers']; body: string; method?: string } | undefined;
    handler = (req, raw, res) => {
      seen = { headers: req.headers, body: raw, method: req.method };
      reply(200, JSON.stringify({ status: 'shipped', items: [1, 2] }))(req, raw, res);
    };
    await expect(call('/ok')).resolves.toEqual({ status: 'shipped', items: [1, 2] });
    expect(seen?.method).toBe('POST');
    expect(JSON.parse(seen?.body ?? '')).toEqual({ tool: 'lookup', ...body });
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(
      verifyWebhookSignature({
        secret: 'tenant-secret',
        body: seen?.body ?? '',
        timestamp: seen?.headers['x-codemode-timestamp'] as string,
        signature: seen?.headers['x-codemode-signature'] as string,
      }),
    ).toBe(true);
    expect(
      verifyWebhookSignature({
        secret: 'other-tenant',
        body: seen?.body ?? '',
        timestamp: seen?.headers['x-codemode-timestamp'] as string,
        signature: seen?.headers['x-codemode-signature'] as string,
      }),
    ).toBe(false);
  });

  it('sends the callKey as the Idempotency-Key header and leaves the body unchanged (SPEC §16)', async () => {
    const seen: { key: string | string[] | undefined; body: string }[] = [];
    handler = (req, raw, res) => {
      seen.push({ key: req.headers['idempotency-key'], body: raw });
      reply(200, 'null')(req, raw, res);
    };
    await call('/ok', { idempotencyKey: 'cm_1:4' });
    await call('/ok');
    expect(seen.map((request) => request.key)).toEqual(['cm_1:4', undefined]);
    expect(seen[0].body).toBe(seen[1].body);
    expect(JSON.parse(seen[0].body)).toEqual({ tool: 'lookup', ...body });
  });

  it('sends no signature without a secret, and maps an empty 2xx body to null', async () => {
    let signature: unknown = 'unset';
    handler = (req, _raw, res) => {
      signature = req.headers['x-codemode-signature'];
      res.writeHead(204);
      res.end();
    };
    await expect(call('/empty', { secret: undefined })).resolves.toBeNull();
    expect(signature).toBeUndefined();
  });

  it('uses the JSON error string of a 500 as the message', async () => {
    handler = reply(500, JSON.stringify({ error: 'order 7 is locked' }));
    await expect(call('/fail')).rejects.toMatchObject({ message: 'order 7 is locked', code: 'webhook_http_error', status: 500 });
    handler = reply(422, JSON.stringify({ message: 'id must be positive' }));
    await expect(call('/fail')).rejects.toMatchObject({ message: 'id must be positive', status: 422 });
  });

  it('uses the bounded response text of a non-JSON error', async () => {
    handler = reply(404, 'Not Found', 'text/plain');
    await expect(call('/missing')).rejects.toMatchObject({ message: 'Not Found', status: 404 });
    handler = reply(502, 'x'.repeat(5000), 'text/plain');
    const error = (await call('/big').catch((caught: unknown) => caught)) as Error;
    expect(error.message.length).toBeLessThan(1100);
    expect(error.message.endsWith('[truncated]')).toBe(true);
  });

  it('refuses invalid JSON in a 2xx answer', async () => {
    handler = reply(200, 'hello, not json', 'text/plain');
    await expect(call('/bad-json')).rejects.toMatchObject({
      code: 'webhook_invalid_json',
      message: expect.stringMatching(/^webhook tool lookup returned invalid JSON: /u),
    });
  });

  it('refuses an answer over 16 MiB', async () => {
    handler = (_req, _raw, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.alloc(16 * 1024 * 1024 + 1, 0x20));
    };
    await expect(call('/huge')).rejects.toMatchObject({ code: 'webhook_response_too_large', status: 200 });
  });

  it("gives up past timeoutMs with SPEC §17's sentence, naming the tool as the guest calls it", async () => {
    handler = () => undefined; // never answers
    const started = Date.now();
    await expect(call('/slow', { timeoutMs: 200 })).rejects.toMatchObject({
      name: 'Error',
      code: 'tool_deadline',
      message: 'tool lookup_2 did not answer within 200 ms.',
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('aborts on the caller signal', async () => {
    handler = () => undefined;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(call('/slow', { signal: controller.signal })).rejects.toMatchObject({
      code: 'aborted',
      message: 'webhook tool lookup was aborted',
    });
  });

  it('does not follow redirects: a 3xx is a failed call naming its status', async () => {
    const paths: string[] = [];
    handler = (req, _raw, res) => {
      paths.push(req.url ?? '');
      res.writeHead(req.url === '/redirect' ? 307 : 200, { location: `${baseUrl}/elsewhere` });
      res.end('{"followed":true}');
    };
    await expect(call('/redirect')).rejects.toMatchObject({
      code: 'webhook_http_error',
      status: 307,
      message: 'webhook tool lookup answered with a redirect (HTTP 307); webhook calls do not follow redirects.',
    });
    expect(paths).toEqual(['/redirect']);
  });

  it('says clearly when nothing listens, without the endpoint or secret', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = (await callWebhookTool({
      toolName: 'lookup',
      callableName: 'lookup_2',
      endpoint: `http://127.0.0.1:${port}/x?token=abc`,
      addressPolicy: LOOPBACK_OK,
      secret: 'tenant-secret',
      body,
    }).catch((caught: unknown) => caught)) as Error & { code: string };
    expect(error.code).toBe('webhook_unreachable');
    expect(error.message).toBe(
      'webhook tool lookup could not reach its endpoint (ECONNREFUSED); check that the endpoint is up and reachable from the worker.',
    );
    expect(error.message).not.toContain('token');
    expect(error.message).not.toContain('tenant-secret');
  });
});

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Cluster, Redis } from 'ioredis';
import type { CodeModeClient } from '@codemode/client';
import { unpackEventData } from '@codemode/events';
import { scanKeys, stackRedis, TestStack } from './utils/test-stack';

jest.setTimeout(240_000);

/**
 * SPEC §18 "Credentials outside the cell" with the real api and worker: a tenant tool's headers are
 * sent with every call of it and are found nowhere else — no read, event, transcript, describe(),
 * tool definition, OpenAPI document, log line, nor any Redis value of the stack in clear.
 */
const OPERATOR_KEY = 'tool-headers-operator';
const API_KEYS = `${OPERATOR_KEY}:acme`;
const SECRETS_KEY = 'a-test-secrets-key-of-at-least-32-characters';
const CANARY = 'canary-hdr-93b7e1f04c';
const CANARY_TWO = 'canary-key-5a0d2c';
const SESSION = 'hdr-1';

/** The test's own tool server, on loopback: it records each request's headers and never echoes them. */
function startServer(): Promise<{ server: Server; url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'shipped' }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, seen });
    }),
  );
}

/**
 * Every value under the stack's prefix (strings, hashes, lists, sets, sorted sets, streams), as
 * text, over every primary when the stack runs on a Redis Cluster.
 */
async function redisValues(redis: Redis | Cluster, prefix: string): Promise<string[]> {
  const values: string[] = [];
  for (const key of await scanKeys(redis, `*${prefix}*`)) {
    const type = await redis.type(key);
    if (type === 'string') values.push(((await redis.getBuffer(key)) ?? Buffer.alloc(0)).toString('latin1'));
    else if (type === 'hash')
      values.push(...Object.entries(await redis.hgetallBuffer(key)).map(([f, v]) => `${f}=${v.toString('latin1')}`));
    else if (type === 'list') values.push(...(await redis.lrangeBuffer(key, 0, -1)).map((v) => v.toString('latin1')));
    else if (type === 'set') values.push(...(await redis.smembers(key)));
    else if (type === 'zset') values.push(...(await redis.zrange(key, '0', '-1')));
    // Event data kept packed is looked at as its readers see it.
    else if (type === 'stream')
      for (const [id, fields] of await redis.xrange(key, '-', '+')) values.push(`${id} ${fields.map(unpackEventData).join(' ')}`);
  }
  return values;
}

describe('tenant tool credential headers (SPEC §18)', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  let hook: Awaited<ReturnType<typeof startServer>>;
  let redis: Redis | Cluster;

  beforeAll(async () => {
    hook = await startServer();
    redis = stackRedis();
    stack = await TestStack.start({
      apiKeys: API_KEYS,
      env: { CODEMODE_SECRETS_KEY: SECRETS_KEY, CODEMODE_WEBHOOK_ALLOW: '127.0.0.1', LOG_LEVEL: 'trace' },
    });
    client = stack.client(OPERATOR_KEY);
  });
  afterAll(async () => {
    await stack?.stop();
    hook?.server.close();
    await redis?.quit();
  });

  const send = (method: string, path: string, body?: unknown) =>
    client.raw(method, path, body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const tool = (endpoint = `${hook.url}/lookup`) => ({
    description: 'Look up an order',
    inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
    endpoint,
  });
  const callOnce = async () => {
    const before = hook.seen.length;
    const result = await client.exec(SESSION, { title: 'call', code: `return await lookup_order({ orderId: 'o-1' });` });
    expect(result).toMatchObject({ status: 'completed', value: { status: 'shipped' } });
    expect(hook.seen).toHaveLength(before + 1);
    return hook.seen[before];
  };

  it('sends the headers with every call and shows them nowhere: reads, events, transcript, describe, definitions, OpenAPI, logs, Redis', async () => {
    const put = await send('PUT', '/v1/tools/lookup_order', {
      ...tool(),
      headers: { Authorization: `Bearer ${CANARY}`, 'X-Api-Key': CANARY_TWO },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'lookup_order', headerNames: ['Authorization', 'X-Api-Key'] });

    const received = await callOnce();
    expect(received.authorization).toBe(`Bearer ${CANARY}`);
    expect(received['x-api-key']).toBe(CANARY_TWO);
    expect(received['x-codemode-timestamp']).toBeDefined();

    const inCell = await client.exec(SESSION, {
      title: 'look',
      code: `
        const described = await lookup_order.describe();
        const found = await catalog.search('order');
        const files = await Promise.all((await API.list()).files.map((file) => API.read(file.path)));
        return { described, found: found.map((h) => ({ ...h })), all: catalog.all().map((h) => ({ ...h })), files, keys: Object.keys(lookup_order) };`,
    });
    expect(inCell).toMatchObject({ status: 'completed', value: { described: { toolName: 'lookup_order', trusted: true } } });

    const listed = await send('GET', '/v1/tools');
    expect(listed.body).toEqual({
      tools: [expect.objectContaining({ name: 'lookup_order', headerNames: ['Authorization', 'X-Api-Key'] })],
    });
    const reads = [
      JSON.stringify(inCell),
      put.text,
      listed.text,
      (await send('GET', `/v1/sessions/${SESSION}`)).text,
      (await send('GET', `/v1/sessions/${SESSION}/tools`)).text,
      (await send('GET', `/v1/sessions/${SESSION}/events`)).text,
      (await send('GET', `/v1/sessions/${SESSION}/transcript`)).text,
      (await send('GET', `/v1/sessions/${SESSION}/runs`)).text,
      (await send('GET', '/v1/sessions')).text,
      (await send('GET', '/v1/fleet')).text,
      ...(await Promise.all(
        ['openai', 'anthropic', 'mcp'].map(
          async (format) => (await send('GET', `/v1/sessions/${SESSION}/tools/definitions?format=${format}`)).text,
        ),
      )),
      await (await fetch(`${stack.baseUrl}/openapi.json`)).text(),
    ];
    for (const text of reads) {
      expect(text).not.toContain(CANARY);
      expect(text).not.toContain(CANARY_TWO);
    }
    expect(reads.join('\n')).toContain('headerNames');

    const values = await redisValues(redis, stack.prefix);
    expect(values.length).toBeGreaterThan(10);
    expect(values.filter((value) => value.includes(CANARY) || value.includes(CANARY_TWO))).toEqual([]);
    expect(values.some((value) => value.includes('sealedHeaders'))).toBe(true);

    const logs = stack.logs();
    // Both processes' logs, at trace: the search means something.
    expect(logs).toMatch(/--- api [\s\S]*--- worker /);
    expect(logs.length).toBeGreaterThan(2000);
    expect(logs).not.toContain(CANARY);
    expect(logs).not.toContain(CANARY_TWO);
  });

  it('keeps the headers on a PUT without them, clears them with {} and when the endpoint changes', async () => {
    const keep = await send('PUT', '/v1/tools/lookup_order', { ...tool(), description: 'changed' });
    expect(keep.body).toMatchObject({ description: 'changed', headerNames: ['Authorization', 'X-Api-Key'] });
    expect((await callOnce()).authorization).toBe(`Bearer ${CANARY}`);

    const moved = await send('PUT', '/v1/tools/lookup_order', tool(`${hook.url}/elsewhere`));
    expect(moved.status).toBe(200);
    expect(moved.body).not.toHaveProperty('headerNames');
    expect((await callOnce()).authorization).toBeUndefined();

    await send('PUT', '/v1/tools/lookup_order', { ...tool(), headers: { Authorization: `Bearer ${CANARY}` } });
    expect((await callOnce()).authorization).toBe(`Bearer ${CANARY}`);
    const cleared = await send('PUT', '/v1/tools/lookup_order', { ...tool(), headers: {} });
    expect(cleared.body).not.toHaveProperty('headerNames');
    expect((await callOnce()).authorization).toBeUndefined();
  });

  it('refuses the names code mode sets itself with 400', async () => {
    for (const name of ['Host', 'Content-Type', 'Idempotency-Key', 'X-Codemode-Signature']) {
      const refused = await send('PUT', '/v1/tools/lookup_order', { ...tool(), headers: { [name]: 'forged' } });
      expect([refused.status, refused.body]).toEqual([
        400,
        {
          error: `headers.${name}: ${name} is set by code mode on every call and cannot be a tool header; remove it (Host, Content-Length, Content-Type, Transfer-Encoding, Connection, Idempotency-Key and X-Codemode-* are refused).`,
          code: 'invalid_input',
          details: { field: `headers.${name}` },
        },
      ]);
    }
  });
});

describe('CODEMODE_SECRETS_KEY (SPEC §18)', () => {
  it('refuses a tenant tool with headers with 503 while no key is set; a tool without headers is stored', async () => {
    const stack = await TestStack.start({ env: { CODEMODE_SECRETS_KEY: '' } });
    try {
      const client = stack.client();
      const send = (body: unknown) =>
        client.raw('PUT', '/v1/tools/t', { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      const refused = await send({ description: 'd', headers: { Authorization: 'x' } });
      expect([refused.status, refused.body]).toEqual([
        503,
        {
          error:
            'tenant tool headers are stored encrypted and this deployment has no CODEMODE_SECRETS_KEY; set it (at least 32 characters) on the API and every worker, or register the tool without headers.',
          code: 'runtime_unavailable',
        },
      ]);
      expect((await send({ description: 'd' })).status).toBe(200);
    } finally {
      await stack.stop();
    }
  });

  it('refuses to start with a key shorter than 32 characters, saying why', async () => {
    await expect(TestStack.start({ env: { CODEMODE_SECRETS_KEY: 'too-short' } })).rejects.toThrow(
      'CODEMODE_SECRETS_KEY must be at least 32 characters (it has 9)',
    );
  });
});

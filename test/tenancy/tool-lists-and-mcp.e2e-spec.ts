import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { CodeModeClient } from '@codemode/client';
import { freePort } from '../utils/free-port';
import { PrivateRedis } from '../utils/private-redis';
import { eventLoopLagMaxMs } from '../utils/event-loop-lag';
import { toolsOfMegabytes } from '../utils/large-tool-lists';
import { sendPreEncoded, type PreEncodedAnswer } from '../utils/pre-encoded-request';
import { TestStack } from '../utils/test-stack';
import { twoTenantProbe, victimHarm, type Victim } from '../utils/two-tenant-probe';

/**
 * SPEC §10 "Fate isolation" and §14, adversarially, round 2: bob (at the default quotas, with an
 * operator and an agent key) attacks through what is derived from tool lists and through `/mcp`,
 * while alice runs the two-tenant probe (reads her session and runs `return 1`, in rounds):
 * - a 9 MB tool list listed by 100 `tools/list` (two batches), 100 `…/tools/definitions` and 20
 *   `GET …/tools`: each once read the whole list from Redis, taking Redis from MiBs to ~1 GB of
 *   reply buffers; now derived once per version, and Redis stays within tens of MiB of its start;
 * - 24 concurrent `/mcp` execs of ~1 MiB of code: their code was checked on the event loop;
 * - 16 agent-key `PUT /tools` merging onto 11 MB operator lists: the merge ran on the event loop;
 * - batches of 100 JSON-RPC messages: each batch counted as one request against the rate.
 * Alice's reads and cells keep their p99 within the bound and complete, the API's loop is never
 * blocked for long. Redis is a private one, so its memory is the stack's alone.
 */

jest.setTimeout(600_000);

const run = randomBytes(4).toString('hex');
const keys = { bob: `tlb-${run}`, bobAgent: `tlba-${run}`, alice: `tla-${run}` };
const MIB = 1024 * 1024;
/** As event-loops.e2e-spec.ts: SPEC's 250 ms is for a deployment's own machine, this one is shared. */
const LOADED_BOUND_MS = 1000;
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

let redis: PrivateRedis;
let redisClient: Redis;
let stack: TestStack;
let alice: Victim;
let bob: CodeModeClient;
let apiMetrics: string;
let boundMs = LOADED_BOUND_MS;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  redisClient = new Redis(redis.url);
  const metricsPort = await freePort();
  stack = await TestStack.start({
    redisUrl: redis.url,
    apiKeys: `${keys.bob}:bob,${keys.bobAgent}:bob:agent,${keys.alice}:alice`,
    env: { API_METRICS_PORT: String(metricsPort) },
  });
  alice = { client: stack.client(keys.alice), sessionId: 'victim' };
  bob = stack.client(keys.bob);
  const open = await fetch(`${stack.baseUrl}/metrics`).then((r) => r.status);
  apiMetrics = open === 200 ? `${stack.baseUrl}/metrics` : `http://127.0.0.1:${metricsPort}/metrics`;
  await eventLoopLagMaxMs(apiMetrics);
  const { victim: idle } = await twoTenantProbe(stack, alice, () => new Promise((r) => setTimeout(r, 2000)));
  expect(victimHarm(idle, { maxP99Ms: Infinity })).toEqual([]);
  boundMs = Math.max(LOADED_BOUND_MS, 5 * idle.read.p99Ms);
  process.stdout.write(`idle: ${JSON.stringify({ read: idle.read, exec: idle.exec })}; bound ${boundMs} ms\n`);
});

afterAll(async () => {
  await stack?.stop();
  redisClient?.disconnect();
  await redis?.cleanup();
});

/** The JSON-RPC answers of an MCP POST (one, or a batch's). */
function rpcAnswers(answer: PreEncodedAnswer): { id?: unknown; result?: Record<string, unknown>; error?: { message: string } }[] {
  const body = JSON.parse(answer.text) as unknown;
  return (Array.isArray(body) ? body : [body]) as { result?: Record<string, unknown>; error?: { message: string } }[];
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const mcp = (key: string, sid: string, messages: unknown, keepBytes?: number): Promise<PreEncodedAnswer> =>
  sendPreEncoded(stack.baseUrl, key, 'POST', '/mcp', json(messages), { ...MCP_HEADERS, 'x-codemode-session': sid }, keepBytes);
const listMessages = (count: number, method = 'tools/list'): unknown[] =>
  Array.from({ length: count }, (_, id) => ({ jsonrpc: '2.0', id, method }));
const bucketRefilled = (): Promise<void> => new Promise((r) => setTimeout(r, 2500));

/** Redis' `used_memory` and the output buffers of its clients, sampled every 50 ms until stopped. */
function sampleRedis(): { stop: () => Promise<{ usedMaxBytes: number; outputMaxBytes: number }> } {
  let usedMaxBytes = 0;
  let outputMaxBytes = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const [info, clients] = await Promise.all([redisClient.info('memory'), redisClient.client('LIST') as Promise<string>]);
      usedMaxBytes = Math.max(usedMaxBytes, Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0));
      const output = [...clients.matchAll(/ omem=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
      outputMaxBytes = Math.max(outputMaxBytes, output);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { usedMaxBytes, outputMaxBytes };
    },
  };
}

async function usedMemory(): Promise<number> {
  return Number(/^used_memory:(\d+)/m.exec(await redisClient.info('memory'))?.[1] ?? 0);
}

/**
 * Runs `attack` under the two-tenant probe; asserts alice's reads and cells kept the bound and
 * completed and the API's loop was never blocked past the bound. Answers the attack's value.
 */
async function underAttack<T>(name: string, attack: () => Promise<T>): Promise<T> {
  await eventLoopLagMaxMs(apiMetrics);
  const started = performance.now();
  const { attack: attacked, victim } = await twoTenantProbe(stack, alice, attack);
  const lag = await eventLoopLagMaxMs(apiMetrics);
  process.stdout.write(
    `${name}: ${JSON.stringify({
      attackSeconds: ((performance.now() - started) / 1000).toFixed(1),
      rounds: victim.rounds,
      read: victim.read,
      exec: victim.exec,
      apiLagMaxMs: Math.round(lag),
    })}\n`,
  );
  expect({ name, harm: victimHarm(victim, { maxP99Ms: boundMs }), apiLagMaxMs: lag < LOADED_BOUND_MS }).toEqual({
    name,
    harm: [],
    apiLagMaxMs: true,
  });
  return attacked;
}

test('a 9 MB tool list listed hundreds of times is read once per version: Redis memory stays bounded, alice stays fast', async () => {
  const first = json({ tools: toolsOfMegabytes(9, 'first_') });
  expect((await sendPreEncoded(stack.baseUrl, keys.bob, 'PUT', '/v1/sessions/big/tools', first, {}, 0)).status).toBe(200);
  await bucketRefilled();
  const startBytes = await usedMemory();
  const sampler = sampleRedis();
  const [batches, definitions, views] = await underAttack('tools/list, definitions and views of a 9 MB list', async () => {
    const lists = await Promise.all([mcp(keys.bob, 'big', listMessages(50), 4 * MIB), mcp(keys.bob, 'big', listMessages(50), 4 * MIB)]);
    await bucketRefilled();
    const defs = await Promise.all(
      Array.from({ length: 80 }, () =>
        sendPreEncoded(stack.baseUrl, keys.bob, 'GET', '/v1/sessions/big/tools/definitions?format=mcp', null),
      ),
    );
    await bucketRefilled();
    const gets = await Promise.all(
      Array.from({ length: 20 }, () => sendPreEncoded(stack.baseUrl, keys.bob, 'GET', '/v1/sessions/big/tools', null, {}, 0)),
    );
    return [lists, defs, gets] as const;
  });
  const { usedMaxBytes, outputMaxBytes } = await sampler.stop();
  process.stdout.write(
    `redis: start ${(startBytes / MIB).toFixed(1)} MiB, max ${(usedMaxBytes / MIB).toFixed(1)} MiB, client output buffers max ${(outputMaxBytes / MIB).toFixed(1)} MiB\n`,
  );
  // Every message answered, each with the list's description (its quick index names the tools).
  const descriptions = batches.flatMap((answer) => {
    expect(answer.status).toBe(200);
    return rpcAnswers(answer).map((message) => (message.result?.tools as { description: string }[])[0].description);
  });
  expect(descriptions).toHaveLength(100);
  expect(new Set(descriptions).size).toBe(1);
  expect(descriptions[0]).toContain('first_0');
  expect(definitions.map((answer) => answer.status)).toEqual(definitions.map(() => 200));
  expect(JSON.parse(definitions[0].text)).toEqual({
    tools: [expect.objectContaining({ name: 'exec', description: descriptions[0] }), expect.anything()],
  });
  expect(views.map((answer) => answer.status)).toEqual(views.map(() => 200));
  // Each read of the whole list held ~9 MB of reply in Redis: 200 of them took it to ~1 GB.
  expect(usedMaxBytes - startBytes).toBeLessThan(48 * MIB);
  expect(outputMaxBytes).toBeLessThan(32 * MIB);

  // A new registration is a new version: listed at once, never the cached one.
  const second = json({ tools: toolsOfMegabytes(9, 'second_') });
  expect((await sendPreEncoded(stack.baseUrl, keys.bob, 'PUT', '/v1/sessions/big/tools', second, {}, 0)).status).toBe(200);
  const after = rpcAnswers(await mcp(keys.bob, 'big', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, 4 * MIB));
  const description = (after[0].result?.tools as { description: string }[])[0].description;
  expect(description).toContain('second_0');
  expect(description).not.toContain('first_0');
});

/** ~960 KiB of valid code (fits a 1 MiB `/mcp` body) that asks for a module: refused once parsed whole. */
function codeOfKibibytes(kib: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < kib * 1024; i += 1) {
    const line = `const v${i} = { a: [${i}, "s${i}", ${i} * 2], b: typeof v${i} };\n`;
    lines.push(line);
    size += line.length;
  }
  return `${lines.join('')}return require("fs");`;
}

test('24 concurrent /mcp execs of ~1 MiB of code are checked off the event loop', async () => {
  await bucketRefilled();
  const body = (id: number): Buffer =>
    json({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'exec', arguments: { title: 'big', code: codeOfKibibytes(960) } } });
  const bodies = Array.from({ length: 24 }, (_, i) => body(i));
  expect(bodies[0].byteLength).toBeLessThan(MIB);
  const answers = await underAttack('24 /mcp execs of ~1 MiB', () =>
    Promise.all(
      bodies.map((bytes, i) =>
        sendPreEncoded(stack.baseUrl, keys.bob, 'POST', '/mcp', bytes, { ...MCP_HEADERS, 'x-codemode-session': `mcp-big-${i % 4}` }),
      ),
    ),
  );
  // Every call answered: a failed cell, refused for module access once its code was parsed whole.
  for (const answer of answers) {
    expect(answer.status).toBe(200);
    const [message] = rpcAnswers(answer);
    expect(message.result).toMatchObject({
      isError: true,
      structuredContent: { status: 'failed', error: 'code mode module access is disabled.' },
    });
  }
});

test('16 agent-key PUT /tools merging onto 11 MB operator lists are merged off the event loop', async () => {
  const operatorList = json({ tools: toolsOfMegabytes(11, 'op_') });
  for (let i = 0; i < 8; i += 1) {
    expect((await sendPreEncoded(stack.baseUrl, keys.bob, 'PUT', `/v1/sessions/merge-${i}/tools`, operatorList, {}, 0)).status).toBe(200);
  }
  await bucketRefilled();
  const agentList = (i: number): Buffer =>
    json({ tools: [{ name: `agent_${i}`, description: 'an agent tool', inputSchema: { type: 'object', properties: {} } }] });
  const answers = await underAttack('16 agent PUT /tools onto 11 MB lists', () =>
    Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        sendPreEncoded(stack.baseUrl, keys.bobAgent, 'PUT', `/v1/sessions/merge-${i % 8}/tools`, agentList(i), {}, 0),
      ),
    ),
  );
  expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  // The operator's list is kept whole, with the agent's tools of the PUT that came last (an agent's
  // PUT replaces the agent's own tools: SPEC §11).
  const view = (await bob.raw('GET', '/v1/sessions/merge-3/tools')).body as { catalog: { toolName: string }[] };
  const names = view.catalog.map((entry) => entry.toolName);
  expect(names.filter((name) => name.startsWith('op_'))).toHaveLength(toolsOfMegabytes(11, 'op_').length);
  const agents = names.filter((name) => name.startsWith('agent_'));
  expect(agents).toHaveLength(1);
  expect(['agent_3', 'agent_11']).toContain(agents[0]);
});

test('each JSON-RPC message of a batch counts against the rate: batches of 100 cost what 100 requests do', async () => {
  await bucketRefilled();
  // Over the burst (100): no wait would let it through.
  const over = await mcp(keys.bob, 'small', listMessages(101, 'ping'));
  expect(over.status).toBe(429);
  expect(JSON.parse(over.text)).toMatchObject({
    error: "a batch of 101 JSON-RPC messages exceeds the tenant's request burst (100); send at most 100 messages per POST.",
    details: { limit: 'rate' },
  });
  // A full bucket takes one batch of 100, and not a second one right after it (at 50/s, a token
  // is back every 20 ms: a single request may pass again at once).
  const [whole, next] = [await mcp(keys.bob, 'small', listMessages(100, 'ping')), await mcp(keys.bob, 'small', listMessages(100, 'ping'))];
  expect(whole.status).toBe(200);
  expect(rpcAnswers(whole)).toHaveLength(100);
  expect(next.status).toBe(429);
  expect(JSON.parse(next.text)).toMatchObject({ code: 'tenant_limit', details: { limit: 'rate' } });

  // Batches of 100 tools/list sent back to back for 8 s: at the rate, not 100 times it.
  let admitted = 0;
  await underAttack('batches of 100 tools/list for 8 s', async () => {
    const until = Date.now() + 8000;
    const sender = async (): Promise<void> => {
      while (Date.now() < until) {
        const answer = await mcp(keys.bob, 'small', listMessages(100), 4 * MIB);
        if (answer.status === 200) admitted += rpcAnswers(answer).length;
        else await new Promise((r) => setTimeout(r, 20));
      }
    };
    await Promise.all(Array.from({ length: 4 }, sender));
  });
  // 8 s at 50/s plus a burst of 100 (the bucket refilled before), with slack for the clock.
  process.stdout.write(`batch messages admitted in 8 s: ${admitted}\n`);
  expect(admitted).toBeLessThanOrEqual(100 + 50 * 9);
});

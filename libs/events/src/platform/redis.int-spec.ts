import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { StoreUnavailableError } from './errors';
import { KeySpace } from './keys';
import { createRedis, isStoreUnavailable, waitUntilReady } from './redis';
import { RunLedger } from '../runs/run-ledger';
import { SessionLedger } from '../ledgers/session-ledger';
import { deleteKeys, newRunId, requestData, testPrefix, testRedis } from '../test-support';

/** A TCP proxy in front of the shared Redis that the test can cut and restore (an outage). */
class Proxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(6379, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => this.sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const prefix = testPrefix('outage');
const keys = new KeySpace(prefix);
const ref = { tenant: 'acme', sessionId: 'outage' };
let admin: Redis;

beforeAll(async () => {
  admin = await testRedis('outage-admin');
});

afterAll(async () => {
  await deleteKeys(admin, prefix);
  await admin.quit();
});

test('nothing listening: calls fail fast with StoreUnavailableError', async () => {
  const redis = createRedis('redis://127.0.0.1:1', { name: 'nowhere' });
  redis.on('error', () => undefined);
  const t0 = Date.now();
  const err: unknown = await new SessionLedger(redis, keys).get(ref).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(StoreUnavailableError);
  expect(err).toMatchObject({ code: 'runtime_unavailable' });
  expect(isStoreUnavailable(err)).toBe(true);
  expect(Date.now() - t0).toBeLessThan(500);
  await expect(waitUntilReady(redis, 200)).rejects.toBeInstanceOf(StoreUnavailableError);
  redis.disconnect();
});

test('Redis goes away: fail fast, nothing half-written; comes back: calls succeed again', async () => {
  const proxy = new Proxy();
  await proxy.start();
  const redis = createRedis(`redis://127.0.0.1:${proxy.port}`, { name: 'via-proxy' });
  redis.on('error', () => undefined);
  await waitUntilReady(redis);
  const runs = new RunLedger(redis, keys);
  await runs.request(ref, newRunId(), requestData());

  await proxy.stop();
  const t0 = Date.now();
  await expect(runs.request(ref, newRunId(), requestData())).rejects.toBeInstanceOf(StoreUnavailableError);
  await expect(runs.get(ref, newRunId())).rejects.toBeInstanceOf(StoreUnavailableError);
  expect(Date.now() - t0).toBeLessThan(3000);

  await proxy.start();
  const deadline = Date.now() + 10_000;
  let recovered = false;
  while (!recovered && Date.now() < deadline) {
    recovered = await runs.request(ref, newRunId(), requestData()).then(
      () => true,
      (err: unknown) => {
        if (!(err instanceof StoreUnavailableError)) throw err;
        return new Promise<boolean>((r) => setTimeout(() => r(false), 100));
      },
    );
  }
  expect(recovered).toBe(true);
  const record = await new SessionLedger(admin, keys).get(ref);
  expect(record?.counts).toMatchObject({ runs: 2, events: 2, transcriptEntries: 2 });
  redis.disconnect();
  await proxy.stop();
});

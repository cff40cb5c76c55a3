import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import type { ShellExitedData, ShellNotifiedData } from '@codemode/contracts';
import { loadConfig } from '@codemode/config';
import { KeySpace, SessionLedger } from '@codemode/events';
import { createLogger, createWorkerMetrics } from '@codemode/telemetry';
import { deleteKeys, testPrefix, testRedis } from '../../../../test/utils/redis-test-keys';
import type { WorkerTenancy } from '../core/worker-tenancy.service';
import { OVER_BOUND_ERROR, ShellExitNotifier } from './shell-exit-notifier.service';

/**
 * SPEC §10 fate isolation: a tenant whose receiver never answers holds at most 16 deliveries of a
 * worker; past that its exits are recorded as not notified at once, and another tenant's still go.
 */
const prefix = testPrefix('worker', 'exit-notifier');
const keys = new KeySpace(prefix);
let redis: Redis;
let server: Server;
let url: string;
const held: ServerResponse[] = [];

const exited = (tenant: string, sessionId: string): ShellExitedData => ({
  sessionId,
  scope: `${tenant}/session:s1`,
  status: 'completed',
  exitCode: 0,
  exitSignal: null,
  timedOut: false,
  startedAt: 1,
  endedAt: 2,
  durationMs: 1,
  backgrounded: true,
  droppedChars: 0,
});

beforeAll(async () => {
  redis = await testRedis('exit-notifier');
  // Holds every request until the test lets them all go.
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/exits`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await deleteKeys(redis, prefix);
  await redis.quit();
});

it('bounds deliveries in flight per tenant, recording the ones past it as failed at once', async () => {
  const sessions = new SessionLedger(redis, keys);
  for (const tenant of ['slow', 'other']) await sessions.configure({ tenant, sessionId: 's1' }, { notifyUrl: url });
  const metrics = createWorkerMetrics('test');
  const notifier = new ShellExitNotifier(
    loadConfig({}),
    createLogger({ service: 'test', level: 'silent', version: 'test' }),
    sessions,
    { mode: 'single' } as WorkerTenancy,
    metrics,
  );
  const recorded = new Map<string, ShellNotifiedData>();
  const record = (data: ShellNotifiedData) => recorded.set(data.sessionId, data);

  for (let i = 1; i <= 17; i += 1) notifier.exited({ tenant: 'slow', sessionId: 's1' }, exited('slow', `p${i}`), 'out', record);
  const until = Date.now() + 5000;
  while ((held.length < 16 || recorded.size < 1) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(held).toHaveLength(16);
  expect([...recorded.values()]).toEqual([
    { sessionId: expect.stringMatching(/^p\d+$/), scope: 'slow/session:s1', status: 'failed', attempts: 0, error: OVER_BOUND_ERROR },
  ]);

  notifier.exited({ tenant: 'other', sessionId: 's1' }, exited('other', 'q1'), 'out', record);
  while (held.length < 17 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(held).toHaveLength(17);

  for (const res of held.splice(0)) res.end();
  while (recorded.size < 18 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  expect([...recorded.values()].filter((data) => data.status === 'delivered')).toHaveLength(17);
  const outcomes = (await metrics.shellNotificationsTotal.get()).values.map(({ labels, value }) => [labels.outcome, value]);
  expect(Object.fromEntries(outcomes)).toEqual({ delivered: 17, failed: 0, dropped: 1 });
  await notifier.stop();
});

it('lets deliveries in flight finish when stopped, and takes no new ones after', async () => {
  const sessions = new SessionLedger(redis, keys);
  const ref = { tenant: 'stopping', sessionId: 's1' };
  await sessions.configure(ref, { notifyUrl: url });
  const notifier = new ShellExitNotifier(
    loadConfig({}),
    createLogger({ service: 'test', level: 'silent', version: 'test' }),
    sessions,
    { mode: 'single' } as WorkerTenancy,
    createWorkerMetrics('test'),
  );
  const recorded: ShellNotifiedData[] = [];
  notifier.exited(ref, exited('stopping', 'last'), 'bye', (data) => recorded.push(data));
  const until = Date.now() + 5000;
  while (held.length < 1 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  const stopped = notifier.stop();
  held.splice(0).forEach((res) => res.end());
  await stopped;
  expect(recorded).toEqual([{ sessionId: 'last', scope: 'stopping/session:s1', status: 'delivered', attempts: 1, httpStatus: 200 }]);
  notifier.exited(ref, exited('stopping', 'after'), 'late', (data) => recorded.push(data));
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(held).toHaveLength(0);
  expect(recorded).toHaveLength(1);
});

import type { Redis } from 'ioredis';
import { KeySpace } from '@codemode/events';
import { TenantUidsExhaustedError } from './errors';
import { TenancyRecord, TENANCY_RECORD_TTL_SECONDS } from './tenancy-record';
import { TenantUids } from './tenant-uids';
import { deleteKeys, testPrefix, testRedis } from './test-support';

const prefix = testPrefix('tenant-uids');
let redis: Redis;

beforeAll(async () => {
  redis = await testRedis('tenant-uids');
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

test('each tenant gets its own uid from the range, the same on every worker, until the range is used up', async () => {
  const keys = new KeySpace(prefix);
  const workerA = new TenantUids(redis, keys, { first: 300_000, last: 300_001 });
  const workerB = new TenantUids(redis, keys, { first: 300_000, last: 300_001 });
  const [alpha, beta] = await Promise.all([workerA.uidOf('alpha'), workerB.uidOf('beta')]);
  expect(new Set([alpha, beta])).toEqual(new Set([300_000, 300_001]));
  expect(await workerB.uidOf('alpha')).toBe(alpha);
  expect(await workerA.uidOf('beta')).toBe(beta);
  await expect(workerA.uidOf('gamma')).rejects.toThrow(TenantUidsExhaustedError);
  await expect(workerA.uidOf('gamma')).rejects.toThrow(
    'every uid of CODEMODE_SHELL_UID_RANGE 300000-300001 belongs to a tenant; widen the range',
  );
});

test('the tenancy record is read back and expires unless renewed', async () => {
  const record = new TenancyRecord(redis, new KeySpace(prefix));
  expect(await record.read()).toBeNull();
  await record.write('multi');
  expect(await record.read()).toBe('multi');
  const ttl = await redis.ttl(`${prefix}:tenancy`);
  expect(ttl).toBeGreaterThan(TENANCY_RECORD_TTL_SECONDS - 5);
  expect(ttl).toBeLessThanOrEqual(TENANCY_RECORD_TTL_SECONDS);
});

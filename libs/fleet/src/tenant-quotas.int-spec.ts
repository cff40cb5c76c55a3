import type { Redis } from 'ioredis';
import { KeySpace } from '@codemode/events';
import { TenantQuotaLedger } from './tenant-quotas';
import { deleteKeys, testPrefix, testRedis } from './test-support';

const prefix = testPrefix('tenant-quotas');
let redis: Redis;
let quotas: TenantQuotaLedger;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  redis = await testRedis('tenant-quotas');
  quotas = new TenantQuotaLedger(redis, new KeySpace(prefix));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

test('leased slots: refused past the quota, per tenant; a holder renews in place; a lapsed lease frees its slot', async () => {
  expect(await quotas.takeSlot('alpha', 'inflight', 'a1', 2, 10_000)).toEqual({ taken: true, count: 1 });
  expect(await quotas.takeSlot('alpha', 'inflight', 'a2', 2, 300)).toEqual({ taken: true, count: 2 });
  expect(await quotas.takeSlot('alpha', 'inflight', 'a3', 2, 10_000)).toEqual({ taken: false, count: 2 });
  expect(await quotas.takeSlot('alpha', 'inflight', 'a1', 2, 10_000)).toEqual({ taken: true, count: 2 });
  expect(await quotas.takeSlot('beta', 'inflight', 'b1', 2, 10_000)).toEqual({ taken: true, count: 1 });
  await sleep(350); // a2's holder "crashed": its lease lapses
  expect(await quotas.takeSlot('alpha', 'inflight', 'a3', 2, 10_000)).toEqual({ taken: true, count: 2 });
  await quotas.releaseSlot('alpha', 'inflight', 'a1');
  expect(await quotas.slotsHeld('alpha', 'inflight')).toBe(1);
});

test('renewing keeps live leases and never revives a lapsed one', async () => {
  await quotas.takeSlot('gamma', 'shell', 's1', 5, 10_000);
  await quotas.takeSlot('gamma', 'shell', 's2', 5, 200);
  await sleep(250);
  expect(await quotas.renewSlots('gamma', 'shell', ['s1', 's2'], 10_000)).toBe(1);
  expect(await quotas.slotsHeld('gamma', 'shell')).toBe(1);
});

test('parked runs: counted by runs and bytes, a run parking again keeps its place, expired ones stop counting', async () => {
  const now = Date.now();
  const max = { runs: 2, bytes: 1000 };
  expect(await quotas.admitParked('delta', 'r1', { expiresAt: now + 60_000, bytes: 400, now }, max)).toEqual({ admitted: true, runs: 1 });
  expect(await quotas.admitParked('delta', 'r2', { expiresAt: now + 60_000, bytes: 700, now }, max)).toEqual({
    admitted: false,
    limit: 'bytes',
    bytes: 1100,
  });
  expect(await quotas.admitParked('delta', 'r2', { expiresAt: now + 100, bytes: 500, now }, max)).toEqual({ admitted: true, runs: 2 });
  expect(await quotas.admitParked('delta', 'r3', { expiresAt: now + 60_000, bytes: 1, now }, max)).toEqual({
    admitted: false,
    limit: 'runs',
    runs: 2,
  });
  expect(await quotas.admitParked('delta', 'r1', { expiresAt: now + 60_000, bytes: 450, now }, max)).toEqual({ admitted: true, runs: 2 });
  // r2 expired: it no longer counts, its bytes neither.
  const later = now + 200;
  expect(await quotas.admitParked('delta', 'r3', { expiresAt: later + 60_000, bytes: 500, now: later }, max)).toEqual({
    admitted: true,
    runs: 2,
  });
  await quotas.freeParked('delta', 'r1');
  expect(await quotas.admitParked('delta', 'r4', { expiresAt: later + 60_000, bytes: 500, now: later }, max)).toEqual({
    admitted: true,
    runs: 2,
  });
});

test('parked runs: a run whose VM left memory counts its image from then on; a released run is never counted again', async () => {
  const now = Date.now();
  const max = { runs: 10, bytes: 100 * 1024 * 1024 };
  const MiB = 1024 * 1024;
  // Two 40 MiB VMs in memory: a third does not fit…
  await quotas.admitParked('theta', 'v1', { expiresAt: now + 60_000, bytes: 40 * MiB, now }, max);
  await quotas.admitParked('theta', 'v2', { expiresAt: now + 60_000, bytes: 40 * MiB, now }, max);
  expect(await quotas.admitParked('theta', 'v3', { expiresAt: now + 60_000, bytes: 40 * MiB, now }, max)).toMatchObject({
    admitted: false,
    limit: 'bytes',
  });
  // …until v1 is evicted to its 300 KB image.
  expect(await quotas.recountParked('theta', 'v1', 300_000)).toBe(true);
  expect(await quotas.admitParked('theta', 'v3', { expiresAt: now + 60_000, bytes: 40 * MiB, now }, max)).toEqual({
    admitted: true,
    runs: 3,
  });
  // Restored into memory and parked again: its VM counts once more, and past the quota it is refused.
  expect(await quotas.admitParked('theta', 'v1', { expiresAt: now + 60_000, bytes: 40 * MiB, now }, max)).toMatchObject({
    admitted: false,
    limit: 'bytes',
    bytes: 120 * MiB,
  });
  await quotas.freeParked('theta', 'v2');
  expect(await quotas.recountParked('theta', 'v2', 1000)).toBe(false);
  expect(await redis.hget(new KeySpace(prefix).tenantQuota('theta', 'parked-bytes'), 'v2')).toBeNull();
});

test('request tokens: a burst, then refused with the time until the next token; buckets are per tenant', async () => {
  const taken = [];
  for (let i = 0; i < 4; i += 1) taken.push(await quotas.takeRequestToken('eps', 2, 3));
  expect(taken.map((t) => t.taken)).toEqual([true, true, true, false]);
  expect(taken[3].retryAfterMs).toBeGreaterThan(0);
  expect(taken[3].retryAfterMs).toBeLessThanOrEqual(500);
  expect((await quotas.takeRequestToken('zeta', 2, 3)).taken).toBe(true);
  await sleep(550);
  expect((await quotas.takeRequestToken('eps', 2, 3)).taken).toBe(true);
});

test('request tokens: a count is taken whole or not at all, and refused with the time until it is back', async () => {
  expect((await quotas.takeRequestToken('iota', 10, 10, 8)).taken).toBe(true);
  const short = await quotas.takeRequestToken('iota', 10, 10, 5);
  expect(short.taken).toBe(false);
  // 2 tokens left of the 5 asked: 3 come back in ~300 ms at 10/s.
  expect(short.retryAfterMs).toBeGreaterThan(200);
  expect(short.retryAfterMs).toBeLessThanOrEqual(300);
  // Nothing was taken by the refusal: the 2 left still serve 2 single requests.
  expect((await quotas.takeRequestToken('iota', 10, 10)).taken).toBe(true);
  expect((await quotas.takeRequestToken('iota', 10, 10)).taken).toBe(true);
});

import type { Redis } from 'ioredis';
import { KeySpace } from '@codemode/events';
import { SlotLeases } from './slot-leases';
import { TenantQuotaLedger } from './tenant-quotas';
import { deleteKeys, testPrefix, testRedis } from './test-support';

/**
 * `admit-call.lua` (SPEC §10): an exec/wait call's request token and in-flight slot in one script,
 * on a real Redis. The rate is decided first; refused at the rate nothing is taken, refused at the
 * in-flight quota the token is spent (as any refused request's) and no slot is taken.
 */
const prefix = testPrefix('admit-call');
const keys = new KeySpace(prefix);
let redis: Redis;
let quotas: TenantQuotaLedger;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LEASE_MS = 10_000;

beforeAll(async () => {
  redis = await testRedis('admit-call');
  quotas = new TenantQuotaLedger(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** Tokens left in the tenant's bucket, as the script wrote them. */
async function tokensLeft(tenant: string): Promise<number> {
  return Number(await redis.hget(keys.tenantQuota(tenant, 'rate'), 'tokens'));
}

async function holders(tenant: string): Promise<string[]> {
  return redis.zrange(keys.tenantQuota(tenant, 'inflight'), '0', '-1');
}

/** A bucket of `burst` refilled slowly enough (0.1 a second) that the counts below read exactly. */
const rate = (burst: number, tokens = 1) => ({ rate: 0.1, burst, tokens });
const slot = (holder: string, max: number, leaseMs = LEASE_MS) => ({ holder, max, leaseMs });

test('one call takes its token and its slot together; the count ranks it among the tenant’s calls', async () => {
  expect(await quotas.admitCall('a1', rate(3), slot('h1', 2))).toEqual({ admitted: true, count: 1 });
  expect(await tokensLeft('a1')).toBeCloseTo(2, 1);
  expect(await quotas.admitCall('a1', rate(3), slot('h2', 2))).toEqual({ admitted: true, count: 2 });
  expect(await tokensLeft('a1')).toBeCloseTo(1, 1);
  expect((await holders('a1')).sort()).toEqual(['h1', 'h2']);
  const [, leaseEnd] = await redis.zrange(keys.tenantQuota('a1', 'inflight'), '0', '0', 'WITHSCORES');
  expect(Number(leaseEnd)).toBeGreaterThan(Date.now() + LEASE_MS - 2000);
  expect(await redis.pttl(keys.tenantQuota('a1', 'inflight'))).toBeGreaterThan(LEASE_MS - 2000);
  // Another tenant has its own bucket and its own slots.
  expect(await quotas.admitCall('b1', rate(3), slot('g1', 1))).toEqual({ admitted: true, count: 1 });
});

test('refused at the rate: no slot is taken and no token, with the time until the token is back', async () => {
  expect(await quotas.admitCall('a2', { rate: 2, burst: 1, tokens: 1 }, slot('h1', 5))).toEqual({ admitted: true, count: 1 });
  const refused = await quotas.admitCall('a2', { rate: 2, burst: 1, tokens: 1 }, slot('h2', 5));
  expect(refused).toMatchObject({ admitted: false, limit: 'rate' });
  expect(refused.admitted === false && refused.limit === 'rate' && refused.retryAfterMs).toBeGreaterThan(0);
  expect(refused.admitted === false && refused.limit === 'rate' && refused.retryAfterMs).toBeLessThanOrEqual(500);
  expect(await holders('a2')).toEqual(['h1']);
  // The refusal took nothing: ~0.5 s later the one token that came back admits one call.
  await sleep(550);
  expect(await quotas.admitCall('a2', { rate: 2, burst: 1, tokens: 1 }, slot('h3', 5))).toEqual({ admitted: true, count: 2 });
});

test('refused at the in-flight quota: no slot is taken; the token is spent as any refused request’s', async () => {
  expect(await quotas.admitCall('a3', rate(10), slot('h1', 1))).toEqual({ admitted: true, count: 1 });
  expect(await quotas.admitCall('a3', rate(10), slot('h2', 1))).toEqual({ admitted: false, limit: 'inflight', count: 1 });
  expect(await holders('a3')).toEqual(['h1']);
  expect(await tokensLeft('a3')).toBeCloseTo(8, 1);
  // At both limits the rate is answered, as when the rate guard ran before the call.
  for (let i = 0; i < 8; i += 1) await quotas.admitCall('a3', rate(10), slot(`x${i}`, 1));
  expect(await quotas.admitCall('a3', rate(10), slot('h3', 1))).toMatchObject({ admitted: false, limit: 'rate' });
  expect(await holders('a3')).toEqual(['h1']);
});

test('a slot’s lease lapses as take-lease-slot’s does: a holder that stopped renewing frees its place', async () => {
  expect(await quotas.admitCall('a4', rate(10), slot('dead', 1, 300))).toEqual({ admitted: true, count: 1 });
  expect(await quotas.admitCall('a4', rate(10), slot('h2', 1))).toMatchObject({ admitted: false, limit: 'inflight' });
  await sleep(350);
  expect(await quotas.admitCall('a4', rate(10), slot('h2', 1))).toEqual({ admitted: true, count: 1 });
  expect(await holders('a4')).toEqual(['h2']);
});

test('a slot kept by SlotLeases is renewed past its first lease and freed by its release', async () => {
  const leases = new SlotLeases(quotas, undefined, 900);
  try {
    expect(await quotas.admitCall('a5', rate(10), slot('kept', 1, leases.leaseMs))).toEqual({ admitted: true, count: 1 });
    const held = leases.keep('a5', 'inflight', 'kept', 1);
    await sleep(2000);
    expect(await quotas.slotsHeld('a5', 'inflight')).toBe(1);
    expect(await quotas.admitCall('a5', rate(10), slot('h2', 1))).toMatchObject({ admitted: false, limit: 'inflight' });
    await held.release();
    expect(await quotas.admitCall('a5', rate(10), slot('h2', 1))).toEqual({ admitted: true, count: 1 });
  } finally {
    leases.close();
  }
});

test('without tokens only the slot is taken (an MCP call: its POST took them); without a slot only the tokens', async () => {
  expect(await quotas.admitCall('a6', { rate: 1, burst: 1, tokens: 0 }, slot('h1', 2))).toEqual({ admitted: true, count: 1 });
  expect(await redis.exists(keys.tenantQuota('a6', 'rate'))).toBe(0);
  expect(await quotas.admitCall('a7', rate(2), null)).toEqual({ admitted: true, count: 0 });
  expect(await redis.exists(keys.tenantQuota('a7', 'inflight'))).toBe(0);
  expect(await tokensLeft('a7')).toBeCloseTo(1, 1);
});

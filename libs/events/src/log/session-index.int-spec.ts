import type { Redis } from 'ioredis';
import { KeySpace } from '../platform/keys';
import { SessionIndex } from './session-index';
import { deleteKeys, testPrefix, testRedis } from '../test-support';

const prefix = testPrefix('session-index');
const keys = new KeySpace(prefix);
let redis: Redis;

beforeAll(async () => {
  redis = await testRedis('session-index');
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

describe('SessionIndex', () => {
  it('lists newest activity first and drops expired members at most once a minute per tenant', async () => {
    const index = new SessionIndex(redis, keys);
    const now = Date.now();
    const longAgo = now - 400 * 24 * 3600 * 1000; // older than any session may live
    await index.touch({ tenant: 'acme', sessionId: 'gone' }, longAgo);
    await index.touch({ tenant: 'acme', sessionId: 'old' }, now - 1000);
    expect((await index.page('acme', 10)).sessionIds).toEqual(['old']);
    // Within the minute: no trim, so a member as old is kept until the next one.
    await index.touch({ tenant: 'acme', sessionId: 'gone-too' }, longAgo);
    await index.touch({ tenant: 'acme', sessionId: 'new' }, now);
    expect((await index.page('acme', 10)).sessionIds).toEqual(['new', 'old', 'gone-too']);
    await index.touch({ tenant: 'acme', sessionId: 'new' }, now + 61_000);
    expect((await index.page('acme', 10)).sessionIds).toEqual(['new', 'old']);
    expect((await index.page('other', 10)).sessionIds).toEqual([]);
  });

  it('gives the index the longest life a session can have at every touch (no key lives forever)', async () => {
    const index = new SessionIndex(redis, keys);
    const key = keys.tenantSessions('ttl-co');
    await index.touch({ tenant: 'ttl-co', sessionId: 's1' });
    const thirtyDaysMs = 30 * 24 * 3600 * 1000;
    expect(await redis.pttl(key)).toBeGreaterThan(thirtyDaysMs - 60_000);
    await redis.persist(key);
    await index.touch({ tenant: 'ttl-co', sessionId: 's1' });
    expect(await redis.pttl(key)).toBeGreaterThan(thirtyDaysMs - 60_000);
  });
});

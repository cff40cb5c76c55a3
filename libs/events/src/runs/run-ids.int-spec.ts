import type { Redis } from 'ioredis';
import { KeySpace } from '../platform/keys';
import { ScriptLoader } from '../platform/script-loader';
import { deleteKeys, testPrefix, testRedis } from '../test-support';
import { RunIds } from './run-ids';

const prefix = testPrefix('run-ids');
const keys = new KeySpace(prefix);
let redis: Redis;
let other: Redis;

beforeAll(async () => {
  redis = await testRedis('run-ids');
  other = await testRedis('run-ids-other-api');
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await Promise.all([redis.quit(), other.quit()]);
});

const here = { tenant: 'acme', sessionId: 'here' };
const there = { tenant: 'acme', sessionId: 'there' };

it('two APIs share the deployment’s key: an id one mints, the other places; the key expires unless used', async () => {
  const [a, b] = [new RunIds(redis, keys), new RunIds(other, keys)];
  const [idA, idB] = await Promise.all([a.mint(there), b.mint(there)]);
  expect(await b.place(here, idA)).toBe('elsewhere');
  expect(await a.place(here, idB)).toBe('elsewhere');
  expect(await a.place({ tenant: 'other', sessionId: 'here' }, idB)).toBe('unknown');
  const ttl = await redis.ttl(keys.runIdKey());
  expect(ttl).toBeGreaterThan(29 * 86_400);
  expect(ttl).toBeLessThanOrEqual(30 * 86_400);
});

it('an id minted longer ago than a run may be held (retention + the longest park) is unknown', async () => {
  let now = Date.parse('2026-12-05T06:00:00.000Z');
  const ids = new RunIds(redis, keys, ScriptLoader.withSettings({ retentionSeconds: 3600 }), () => now);
  const id = await ids.mint(there);
  now += 3600_000 + 86_400_000 - 1;
  expect(await ids.place(here, id)).toBe('elsewhere');
  now += 2;
  expect(await ids.place(here, id)).toBe('unknown');
});

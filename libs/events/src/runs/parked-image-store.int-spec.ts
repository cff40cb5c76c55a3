import type { Redis } from 'ioredis';
import { KeySpace } from '../platform/keys';
import { ParkedImageStore, type StoredParkedImage } from './parked-image-store';
import { deleteKeys, newRunId, testPrefix, testRedis } from '../test-support';

const prefix = testPrefix('parked-images');
const ref = { tenant: 'acme', sessionId: 'images' };
let redis: Redis;
let store: ParkedImageStore;

beforeAll(async () => {
  redis = await testRedis('parked-images');
  store = new ParkedImageStore(redis, new KeySpace(prefix));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

function image(epoch: number): StoredParkedImage {
  // Every byte value, so binary data must survive the round trip unchanged.
  const bytes = Buffer.alloc(70_000);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = (i * 31) % 256;
  return { image: bytes, wasmHash: 'f'.repeat(64), preludeVersion: 'v1', epoch, host: '{"priorOutputBytes":3}' };
}

describe('ParkedImageStore (SPEC §12)', () => {
  it('stores an image in the session slot with the snapshot TTL, and replaces it whole', async () => {
    const runId = newRunId();
    await store.put(ref, runId, image(1), 60_000);
    const key = `${prefix}:{acme:images}:image:${runId}`;
    expect(await redis.pttl(key)).toBeGreaterThan(59_000);
    expect(await store.get(ref, runId)).toEqual(image(1));
    expect(await store.has(ref, runId)).toBe(true);
    expect(await store.memoryUsage(ref, runId)).toBeGreaterThan(70_000);
    await store.put(ref, runId, { ...image(2), host: '{}' }, 1000);
    expect(await store.get(ref, runId)).toMatchObject({ epoch: 2, host: '{}' });
    expect(await redis.pttl(key)).toBeLessThanOrEqual(1000);
  });

  it('answers null for no image or one missing a field, and deletes', async () => {
    const runId = newRunId();
    expect(await store.get(ref, runId)).toBeNull();
    expect(await store.memoryUsage(ref, runId)).toBeNull();
    await store.put(ref, runId, image(1), 60_000);
    await redis.hdel(`${prefix}:{acme:images}:image:${runId}`, 'wasmHash');
    expect(await store.get(ref, runId)).toBeNull();
    await store.delete(ref, runId);
    expect(await store.has(ref, runId)).toBe(false);
  });
});

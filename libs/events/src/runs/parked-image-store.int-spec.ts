import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { StaleEpochError } from '../platform/errors';
import { KeySpace } from '../platform/keys';
import { ParkedImageStore, type StoredParkedImage } from './parked-image-store';
import { RunLedger } from './run-ledger';
import type { ParkInput } from './run-parking';
import { deleteKeys, newRunId, requestData, testPrefix, testRedis, waiting } from '../test-support';

const prefix = testPrefix('parked-images');
const keys = new KeySpace(prefix);
const ref: SessionRef = { tenant: 'acme', sessionId: 'images' };
let redis: Redis;
let store: ParkedImageStore;
let runs: RunLedger;

beforeAll(async () => {
  redis = await testRedis('parked-images');
  store = new ParkedImageStore(redis, keys);
  runs = new RunLedger(redis, keys);
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

/** A run started by a worker at `epoch`. */
async function startedRun(epoch = 1): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, { workerId: 'w1', epoch, replyTo: '' });
  return runId;
}

function park(runId: string, epoch: number, expiresAt: number, stored: StoredParkedImage | null): ParkInput {
  return {
    runId,
    epoch,
    image: stored,
    data: { result: waiting(runId), expiresAt: new Date(expiresAt).toISOString(), snapshotBytes: 70_000 },
  };
}

describe('ParkedImageStore (SPEC §12)', () => {
  it('a park writes run.parked and the image in one step, the image expiring when the run does', async () => {
    const runId = await startedRun();
    const expiresAt = Date.now() + 60_000;
    await runs.park(ref, park(runId, 1, expiresAt, image(1)));
    const key = `${prefix}:{acme:images}:image:${runId}`;
    expect(await redis.pexpiretime(key)).toBe(expiresAt);
    expect(await store.get(ref, runId)).toEqual(image(1));
    expect(await store.has(ref, runId)).toBe(true);
    expect(await store.memoryUsage(ref, runId)).toBeGreaterThan(70_000);
    const run = await runs.get(ref, runId);
    expect([run?.status, run?.expiresAt]).toEqual(['waiting', new Date(expiresAt).toISOString()]);
    // The append counted the image it found in the same script (count_image).
    expect(Number(await redis.hget(keys.run(ref, runId), 'imageBytes'))).toBeGreaterThan(70_000);
  });

  it('a park the run refuses (stale epoch) writes no image; a retry of the same park answers the first event', async () => {
    const runId = await startedRun(2);
    await expect(runs.park(ref, park(runId, 1, Date.now() + 60_000, image(1)))).rejects.toThrow(StaleEpochError);
    expect(await store.has(ref, runId)).toBe(false);
    const first = await runs.park(ref, park(runId, 2, Date.now() + 60_000, image(2)));
    expect(await runs.park(ref, park(runId, 2, Date.now() + 60_000, image(2)))).toEqual(first);
    expect(await store.get(ref, runId)).toMatchObject({ epoch: 2 });
  });

  it('a park without an image records run.parked alone', async () => {
    const runId = await startedRun();
    await runs.park(ref, park(runId, 1, Date.now() + 60_000, null));
    expect((await runs.get(ref, runId))?.status).toBe('waiting');
    expect(await store.has(ref, runId)).toBe(false);
  });

  it('answers null for no image or one missing a field, and deletes', async () => {
    const runId = await startedRun();
    expect(await store.get(ref, runId)).toBeNull();
    expect(await store.memoryUsage(ref, runId)).toBeNull();
    await runs.park(ref, park(runId, 1, Date.now() + 60_000, image(1)));
    await redis.hdel(`${prefix}:{acme:images}:image:${runId}`, 'wasmHash');
    expect(await store.get(ref, runId)).toBeNull();
    await store.delete(ref, runId);
    expect(await store.has(ref, runId)).toBe(false);
  });
});

import type { SessionRef } from '@codemode/contracts';
import { KeySpace } from '@codemode/events';
import type { Redis } from 'ioredis';
import { ResultIdError, ResultsCapacityError, ResultUnavailableError } from '../errors';
import { MAX_DESCRIPTOR_BYTES, MAX_RESULTS } from '../limits';
import { deleteKeys, LIMITS, testPrefix, testRedis } from '../test-support';
import { ResultsStore, type ResultsLimits } from './results-store';
import { STORE_SCRIPT_NAMES, storeScripts } from '../scripts';

const prefix = testPrefix('results');
const keys = new KeySpace(prefix);
let redis: Redis;
let other: Redis;
let results: ResultsStore;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });
const limits: ResultsLimits = {
  resultsTtlSeconds: LIMITS.resultsTtlSeconds,
  memoryLimitBytes: LIMITS.memoryLimitBytes,
  maxSnapshotBytes: LIMITS.maxSnapshotBytes,
};
const FULL = 'Code Mode results capacity exceeded; delete saved references or save a smaller value. Existing references are unchanged.';
const GONE = 'Code Mode result is unavailable or expired; fetch fresh data if needed.';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  redis = await testRedis('results-a');
  other = await testRedis('results-b');
  results = new ResultsStore(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await Promise.all([redis.quit(), other.quit()]);
});

test('save → descriptor (≤ 768 bytes for a big nested value); load from another connection returns the JSON text', async () => {
  const ref = newRef();
  const value = {
    items: Array.from({ length: 2000 }, (_, i) => ({ id: i, label: `item ${i}`, deep: { more: [i, [i]] } })),
    n: 2 ** 53 + 2,
    s: 'a\ud800b',
  };
  const json = JSON.stringify(value);
  const d = await results.save(ref, json, limits);
  expect(d.id).toMatch(/^result_[0-9a-f-]{36}$/);
  expect(d).toMatchObject({ bytes: Buffer.byteLength(json), count: 3, previewTruncated: true });
  expect(d.shape.startsWith('object ')).toBe(true);
  expect(Buffer.byteLength(JSON.stringify(d))).toBeLessThanOrEqual(MAX_DESCRIPTOR_BYTES);
  expect(await new ResultsStore(other, keys).load(ref, d.id)).toBe(json);
  expect(await results.usage(ref)).toEqual({ references: 1, bytes: Buffer.byteLength(json) });
});

test('count and shape per type', async () => {
  const ref = newRef();
  const cases: [unknown, number, string][] = [
    [[1, 2, 3], 3, 'array'],
    [{ a: 1, b: 2 }, 2, 'object'],
    ['text', 1, 'string'],
    [7, 1, 'number'],
    [true, 1, 'boolean'],
    [null, 1, 'null'],
  ];
  for (const [value, count, kind] of cases) {
    const d = await results.save(ref, JSON.stringify(value), limits);
    expect(d.count).toBe(count);
    expect(d.shape.split(/[ [;]/)[0]).toBe(kind);
    expect(d).toMatchObject({ preview: JSON.stringify(value), previewTruncated: false });
  }
});

test('the 65th live reference is refused; deleting one makes room', async () => {
  const ref = newRef();
  const ids: string[] = [];
  for (let i = 0; i < MAX_RESULTS; i++) ids.push((await results.save(ref, `[${i}]`, limits)).id);
  const refused = results.save(ref, '[64]', limits);
  await expect(refused).rejects.toBeInstanceOf(ResultsCapacityError);
  await expect(refused).rejects.toMatchObject({ message: FULL, reason: 'count' });
  expect(await results.usage(ref)).toMatchObject({ references: 64 });
  expect(await results.load(ref, ids[0])).toBe('[0]');
  expect(await results.delete(ref, ids[0])).toBe(true);
  await results.save(ref, '[64]', limits);
});

test('references share min(memoryLimitBytes, maxSnapshotBytes) bytes; a full store refuses, never evicts', async () => {
  const ref = newRef();
  const small: ResultsLimits = { resultsTtlSeconds: 60, memoryLimitBytes: 4096, maxSnapshotBytes: 1024 };
  const a = await results.save(ref, JSON.stringify('a'.repeat(598)), small); // 600 bytes
  await expect(results.save(ref, JSON.stringify('b'.repeat(498)), small)).rejects.toMatchObject({ message: FULL, reason: 'bytes' });
  await expect(results.save(ref, JSON.stringify('c'.repeat(2000)), small)).rejects.toBeInstanceOf(ResultsCapacityError);
  const b = await results.save(ref, JSON.stringify('b'.repeat(422)), small); // exactly 1024 in all
  expect(await results.usage(ref)).toEqual({ references: 2, bytes: 1024 });
  expect(await results.load(ref, a.id)).toBe(JSON.stringify('a'.repeat(598)));
  expect(await results.load(ref, b.id)).toBe(JSON.stringify('b'.repeat(422)));
});

test('an expired reference stops counting and cannot be loaded', async () => {
  const ref = newRef();
  const short: ResultsLimits = { resultsTtlSeconds: 1, memoryLimitBytes: 2048, maxSnapshotBytes: 1 << 20 };
  const d = await results.save(ref, JSON.stringify('x'.repeat(2046)), short); // the whole 2048-byte allowance
  await expect(results.save(ref, '1', short)).rejects.toBeInstanceOf(ResultsCapacityError);
  await sleep(1100);
  await expect(results.load(ref, d.id)).rejects.toMatchObject({ message: GONE });
  expect(await results.usage(ref)).toEqual({ references: 0, bytes: 0 });
  const next = await results.save(ref, JSON.stringify('y'.repeat(2046)), short);
  expect(await results.load(ref, next.id)).toBe(JSON.stringify('y'.repeat(2046)));
  expect(await results.delete(ref, d.id)).toBe(false);
});

test('delete → true, then false; load of a deleted, unknown or foreign id rejects', async () => {
  const ref = newRef();
  const d = await results.save(ref, '{"a":1}', limits);
  await expect(results.load(newRef(), d.id)).rejects.toBeInstanceOf(ResultUnavailableError);
  expect(await results.delete(ref, d.id)).toBe(true);
  expect(await results.delete(ref, d.id)).toBe(false);
  await expect(results.load(ref, d.id)).rejects.toMatchObject({ name: 'Error', message: GONE });
  await expect(results.load(ref, 'result_00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(ResultUnavailableError);
  await expect(results.load(ref, 'result_x:*')).rejects.toBeInstanceOf(ResultUnavailableError);
  expect(await results.delete(ref, 'nope')).toBe(false);
  for (const id of ['', 1, null, undefined]) {
    await expect(results.load(ref, id)).rejects.toBeInstanceOf(ResultIdError);
    await expect(results.delete(ref, id)).rejects.toMatchObject({
      name: 'TypeError',
      message: 'results reference id must be a non-empty string.',
    });
  }
  expect(await results.usage(ref)).toEqual({ references: 0, bytes: 0 });
});

test('each script of this library with includes compiles as a Redis Function (it runs as one)', async () => {
  const libraries = STORE_SCRIPT_NAMES.flatMap((name) => storeScripts().library(name) ?? []);
  expect(libraries.map((library) => library.name)).toHaveLength(STORE_SCRIPT_NAMES.length);
  for (const library of libraries) {
    await redis.call('FUNCTION', 'LOAD', library.code).catch((err: Error) => {
      if (!/already exists/.test(err.message)) throw new Error(`${library.name}: ${err.message}`);
    });
  }
});

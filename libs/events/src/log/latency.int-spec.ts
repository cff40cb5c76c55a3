import type { Redis } from 'ioredis';
import { KeySpace } from '../platform/keys';
import { RunLedger } from '../runs/run-ledger';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis } from '../test-support';

/** Measures one call at a time (no pipelining overlap): the script's own round trip. */
const CALLS = 500;
const prefix = testPrefix('latency');
let redis: Redis;

beforeAll(async () => {
  redis = await testRedis('latency');
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

test(`p50 of request/start/finish over ${CALLS} calls`, async () => {
  const runs = new RunLedger(redis, new KeySpace(prefix));
  const ref = { tenant: 'acme', sessionId: 'latency' };
  const samples = { request: [] as number[], start: [] as number[], finish: [] as number[] };
  const time = async (into: number[], op: () => Promise<unknown>) => {
    const t0 = process.hrtime.bigint();
    await op();
    into.push(Number(process.hrtime.bigint() - t0) / 1e6);
  };
  const result = completed({ rows: Array.from({ length: 20 }, (_, i) => ({ i, name: `row ${i}` })) });
  for (let i = 0; i < CALLS; i++) {
    const runId = newRunId();
    await time(samples.request, () => runs.request(ref, runId, requestData('latency', 'return 1 + 1')));
    await time(samples.start, () => runs.start(ref, runId, { workerId: 'w', epoch: 1, replyTo: 'cm:reply:nobody' }));
    await time(samples.finish, () => runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result, replyTo: 'cm:reply:nobody' }));
  }
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];
  const report = Object.entries(samples)
    .map(([name, xs]) => `${name}: p50 ${pct(xs, 0.5).toFixed(3)} ms, p99 ${pct(xs, 0.99).toFixed(3)} ms`)
    .join('; ');
  console.log(`script latency over ${CALLS} calls (session log growing to ${CALLS * 3} events): ${report}`);
  for (const xs of Object.values(samples)) expect(pct(xs, 0.5)).toBeLessThan(50);
});

import type { Redis } from 'ioredis';
import type { SessionRef } from '@codemode/contracts';
import { ClientToolsLedger } from './client-tools-ledger';
import { KeySpace } from '../platform/keys';
import { eventTypeOf } from '../log/entry-codes';
import { RunLedger } from '../runs/run-ledger';
import { ScriptLoader } from '../platform/script-loader';
import { SessionRemoval } from './session-removal';
import { StoreLedger } from './store-ledger';
import { StoredBytesLedger } from './stored-bytes-ledger';
import { completed, deleteKeys, newRunId, requestData, testPrefix, testRedis, untypedAppend, waiting } from '../test-support';

const prefix = testPrefix('stored-bytes');
const keys = new KeySpace(prefix);
/** Three seconds of retention, so a test can outwait it (and a loaded machine still writes a run within it). */
const RETENTION_MS = 3000;
const scripts = ScriptLoader.withSettings({ retentionSeconds: RETENTION_MS / 1000 });
const W = { workerId: 'w-1', epoch: 1, replyTo: '' };
let redis: Redis;
let runs: RunLedger;
let store: StoreLedger;
let tools: ClientToolsLedger;
let stored: StoredBytesLedger;
let removal: SessionRemoval;
let n = 0;
const newRef = (tenant = 'acme'): SessionRef => ({ tenant, sessionId: `s-${++n}` });
const KB100 = 'x'.repeat(100 * 1024);

beforeAll(async () => {
  redis = await testRedis('stored-bytes');
  runs = new RunLedger(redis, keys, scripts);
  store = new StoreLedger(redis, keys, scripts);
  tools = new ClientToolsLedger(redis, keys, scripts);
  stored = new StoredBytesLedger(redis, keys, scripts);
  removal = new SessionRemoval(redis, keys, scripts);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

async function sessionKeys(ref: SessionRef): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', keys.sessionPattern(ref), 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
}

/** What Redis itself says the session's keys take. */
async function memoryOf(ref: SessionRef): Promise<number> {
  let total = 0;
  for (const key of await sessionKeys(ref)) total += Number(await redis.memory('USAGE', key, 'SAMPLES', 0));
  return total;
}

/**
 * The counter recomputed from what the keys hold, by the rule of lua/includes/stored-bytes.lua: exact
 * while no trim cut inside a time bucket (it then holds the bucket's bytes until a later trim).
 */
async function recount(ref: SessionRef): Promise<number> {
  let bytes = 0;
  for (const [, f] of await redis.xrange(keys.events(ref), '-', '+')) {
    const field = (name: string) => (f.includes(name) ? f[f.indexOf(name) + 1] : '');
    const type = field('type');
    const data = Buffer.byteLength(field('data'));
    bytes += 64 + type.length + field('runId').length + field('at').length + data;
    // A run's hash and runs index entry, as this suite's runs are kept: compact (RUN_OVERHEAD).
    if (eventTypeOf(type) === 'run.requested') bytes += 288;
  }
  // A finished run folded with its entries (lua/includes/run-record.lua): its record, and its share.
  for (const record of await redis.hvals(keys.pastRuns(ref))) if (record.startsWith('A')) bytes += Buffer.byteLength(record) + 160;
  for (const element of await redis.lrange(keys.transcript(ref), 0, -1)) bytes += Buffer.byteLength(element) + 16;
  bytes += Number((await redis.hget(keys.session(ref), 'storeBytes')) ?? 0);
  bytes += await redis.strlen(keys.clientTools(ref));
  return bytes;
}

async function counter(ref: SessionRef): Promise<number> {
  return Number((await redis.hget(keys.session(ref), 'storedBytes')) ?? 0);
}

async function finishedRun(ref: SessionRef, code = 'return 1', value: unknown = 1): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, requestData('t', code));
  await runs.start(ref, runId, W);
  await runs.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: 'line' } });
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(value) });
  return runId;
}

test('appends count what the keys hold: the counter equals a recount, and at least 3/4 of what Redis says the keys use', async () => {
  const ref = newRef();
  await finishedRun(ref, `return "${KB100}"`, KB100);
  const runId = newRunId();
  await runs.request(ref, runId, requestData('t', 'return 2'));
  await runs.start(ref, runId, W);
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(2) });

  expect(await counter(ref)).toBe(await recount(ref));
  const { bytes } = await stored.measure(ref);
  // Code and result once each (log): the run hash and the transcript name the events, copying neither.
  expect(bytes).toBeGreaterThan(2 * KB100.length);
  expect(bytes).toBeLessThan(3 * KB100.length);
  // Below MEMORY USAGE by the allocator's rounding (jemalloc size classes, up to 25 %).
  const memory = await memoryOf(ref);
  expect(bytes).toBeLessThanOrEqual(memory);
  expect(bytes).toBeGreaterThan(0.75 * memory);
});

test('trivial execs: the count per exec is within 25 % of what Redis holds for it', async () => {
  const ref = newRef();
  for (let i = 0; i < 50; i++) await finishedRun(ref);
  const { bytes } = await stored.measure(ref);
  const memory = await memoryOf(ref);
  expect(Math.abs(bytes - memory) / memory).toBeLessThan(0.25);
});

test('a store write adds its value bytes and a delete gives them back; a smaller tool list gives bytes back', async () => {
  const ref = newRef();
  await finishedRun(ref);
  const base = await counter(ref);
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, W);
  const afterRequest = await counter(ref);
  await store.commit(ref, { runId, epoch: 1, writes: new Map([['"k"', JSON.stringify(KB100)]]), capacityBytes: 1 << 20 });
  const afterCommit = await counter(ref);
  expect(afterCommit - afterRequest).toBeGreaterThanOrEqual(KB100.length);
  // A run commits once: the delete is another run's.
  const deleting = newRunId();
  await runs.request(ref, deleting, requestData());
  await runs.start(ref, deleting, W);
  const beforeDelete = await counter(ref);
  await store.commit(ref, { runId: deleting, epoch: 1, writes: new Map([['"k"', null]]), capacityBytes: 1 << 20 });
  expect(await counter(ref)).toBe(await recount(ref));
  // The store gives its value back; the commit's event keeps its copy until retention trims it.
  expect(beforeDelete - (await counter(ref))).toBeGreaterThan(KB100.length - 1000);
  expect(base).toBeLessThan(afterRequest);

  const tool = (description: string) => ({
    name: 'lookup',
    description,
    inputSchema: { type: 'object' },
    endpoint: 'http://127.0.0.1:1/t',
  });
  await tools.put(ref, [tool(KB100)] as never);
  const big = await counter(ref);
  await tools.put(ref, [tool('small')] as never);
  expect(big - (await counter(ref))).toBeGreaterThan(KB100.length - 1000);
  expect(await counter(ref)).toBe(await recount(ref));
});

test('retention gives the bytes of what it trims back, also when trimmed without a write (measure with trim)', async () => {
  const ref = newRef();
  await finishedRun(ref, `return "${KB100}"`, KB100);
  const full = await counter(ref);
  await new Promise((resolve) => setTimeout(resolve, 2 * RETENTION_MS + 100));

  const { bytes } = await stored.measure(ref, true);
  expect(await counter(ref)).toBe(await recount(ref));
  expect(bytes).toBeLessThan(full - 2 * KB100.length);
  expect(await redis.xlen(keys.events(ref))).toBe(0);
});

test('a trim gives back the bytes of the entries it cut without reading them, one time bucket late at most', async () => {
  const ref = newRef();
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, W);
  for (let i = 0; i < 100; i++) await runs.append(ref, { type: 'run.output', runId, epoch: 1, data: { text: `line ${i}` } });
  await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: completed(1) });
  expect(await counter(ref)).toBe(await recount(ref));
  // Past the retention and one bucket (min(60 s, retention)): every bucket of those entries is behind the cut.
  await new Promise((resolve) => setTimeout(resolve, 2 * RETENTION_MS + 100));

  await stored.measure(ref, true);
  expect(await redis.xlen(keys.events(ref))).toBe(0);
  expect(await counter(ref)).toBe(await recount(ref));
  expect(await counter(ref)).toBe(0);
});

test('a parked run counts its image until it ends', async () => {
  const ref = newRef();
  const runId = newRunId();
  await runs.request(ref, runId, requestData());
  await runs.start(ref, runId, W);
  await redis.hset(keys.parkedImage(ref, runId), 'image', Buffer.alloc(50_000), 'host', '{}');
  await redis.pexpire(keys.parkedImage(ref, runId), 60_000);
  const before = await counter(ref);
  await runs.append(ref, untypedAppend({ type: 'run.parked', runId, epoch: 1, data: { result: waiting(runId) } }));
  const parked = await counter(ref);
  expect(parked - before).toBeGreaterThan(50_000);
  await runs.finish(ref, runId, { epoch: 1, type: 'run.failed', result: completed(0) });
  expect(await counter(ref)).toBeLessThan(parked - 50_000 + 2000);
});

test("the tenant's total is the sum of its sessions' last measures, and drops a session at its expiry", async () => {
  const tenant = `t${Date.now()}`;
  const a = newRef(tenant);
  const b = newRef(tenant);
  await finishedRun(a, `return "${KB100}"`);
  await finishedRun(b);
  const total = (await stored.refresh(a)) && (await stored.refresh(b));
  expect(total).toBe((await stored.measure(a)).bytes + (await stored.measure(b)).bytes);
  expect((await stored.total(tenant, 1)).largest).toEqual([a.sessionId]);

  // A report is a measure, not a delta: repeating it changes nothing.
  expect(await stored.refresh(a)).toBe(total);
  // A session whose keys expire stops counting at the expiry its measure saw.
  await stored.report(tenant, new Map([[b.sessionId, { bytes: 1000, ttlMs: 200 }]]));
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect((await stored.total(tenant)).bytes).toBe((await stored.measure(a)).bytes);
  await stored.forget(a);
  expect((await stored.total(tenant)).bytes).toBe(0);
  expect(await redis.exists(keys.tenantQuota(tenant, 'stored-total'))).toBe(0);
});

test('the sessions of a tenant measured together are reported in one call, each in its own place', async () => {
  const tenant = `t${Date.now()}m`;
  const refs = [newRef(tenant), newRef(tenant), newRef(tenant)];
  await finishedRun(refs[0], 'return "big"', KB100);
  await finishedRun(refs[1]);
  // refs[2] has never been written: it measures as gone and takes no place.
  await stored.refreshAll(
    tenant,
    refs.map((r) => r.sessionId),
  );
  const measures = await Promise.all(refs.slice(0, 2).map((r) => stored.measure(r)));
  expect((await stored.total(tenant)).bytes).toBe(measures[0].bytes + measures[1].bytes);
  expect(await redis.zrange(keys.tenantQuota(tenant, 'stored-bytes'), '0', '-1')).toEqual([refs[1].sessionId, refs[0].sessionId]);
  // Reporting again replaces each measure; a session whose keys are gone since leaves the total.
  await redis.del(...(await sessionKeys(refs[0])));
  await stored.refreshAll(
    tenant,
    refs.map((r) => r.sessionId),
  );
  expect((await stored.total(tenant)).bytes).toBe(measures[1].bytes);
  expect(await redis.zrange(keys.tenantQuota(tenant, 'stored-bytes'), '0', '-1')).toEqual([refs[1].sessionId]);
});

test('removal deletes every key of the session and its place in the tenant total; a later idempotent exec starts afresh', async () => {
  const tenant = `t${Date.now()}r`;
  const ref = newRef(tenant);
  const other = newRef(tenant);
  const first = newRunId();
  await runs.request(ref, first, requestData(), { idempotencyKey: 'idem-1' });
  await runs.start(ref, first, W);
  await store.commit(ref, { runId: first, epoch: 1, writes: new Map([['"k"', '1']]), capacityBytes: 1024 });
  await runs.finish(ref, first, { epoch: 1, type: 'run.completed', result: completed(1) });
  await finishedRun(other);
  await stored.refresh(ref);
  const otherBytes = await stored.refresh(other);

  expect(await removal.liveRunIds(ref)).toEqual([]);
  expect(await removal.remove(ref)).toBe(true);
  expect((await sessionKeys(ref)).filter((k) => !k.includes(':idem:'))).toEqual([]);
  expect((await stored.total(tenant)).bytes).toBe((await stored.measure(other)).bytes);
  expect(otherBytes).toBeGreaterThan(0);
  expect(await removal.remove(ref)).toBe(false);

  const again = await runs.request(ref, newRunId(), requestData(), { idempotencyKey: 'idem-1' });
  expect(again).toEqual({ created: true });
});

import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ClientTool, SessionRef } from '@codemode/contracts';
import { ClientToolsLedger } from './client-tools-ledger';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { rebuildClientToolNames } from '../log/projections/rebuild-client-tools';
import { rebuildSession } from '../log/projections/rebuild-session';
import { ScriptLoader } from '../platform/script-loader';
import { SessionLedger } from './session-ledger';
import { deleteKeys, testPrefix, testRedis } from '../test-support';

const prefix = testPrefix('tools');
const keys = new KeySpace(prefix);
let redis: Redis;
let tools: ClientToolsLedger;
let log: EventLog;
let sessions: SessionLedger;
let n = 0;
const newRef = (): SessionRef => ({ tenant: 'acme', sessionId: `s-${++n}` });

const ticket: ClientTool = {
  name: 'fake_create_ticket',
  description: 'Create a ticket',
  inputSchema: { type: 'object', properties: { title: { type: 'string' } } },
  endpoint: 'https://hooks.example.com/ticket?token=secret-123',
  timeoutMs: 5000,
};
const lookup: ClientTool = { name: 'lookup', description: 'Look up \ud800 things', inputSchema: { type: 'object' }, replaySafe: true };

beforeAll(async () => {
  redis = await testRedis('client-tools');
  tools = new ClientToolsLedger(redis, keys);
  log = new EventLog(redis, keys);
  sessions = new SessionLedger(redis, keys);
});

afterAll(async () => {
  tools.close();
  await deleteKeys(redis, prefix);
  await redis.quit();
});

test('put creates the session, stores the full list, and logs names and count only', async () => {
  const ref = newRef();
  expect((await tools.read(ref)).tools).toEqual([]);
  expect(await sessions.get(ref)).toBeNull();
  const { eventId } = await tools.put(ref, [ticket, lookup]);
  expect((await tools.read(ref)).tools).toEqual([ticket, lookup]);
  expect(await sessions.get(ref)).not.toBeNull();

  const { events } = await log.read(ref, { limit: 100 });
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ id: eventId, type: 'tools.registered', data: { tools: ['fake_create_ticket', 'lookup'], count: 2 } });
  const raw = await redis.xrange(keys.events(ref), '-', '+');
  expect(JSON.stringify(raw)).not.toMatch(/hooks\.example|secret-123|inputSchema|timeoutMs/);
});

test('a put replaces the list (an empty put clears it); the names equal the rebuild', async () => {
  const ref = newRef();
  await tools.put(ref, [ticket, lookup]);
  await tools.put(ref, [lookup]);
  expect((await tools.read(ref)).tools).toEqual([lookup]);
  let events = await log.history(ref);
  expect(rebuildClientToolNames(events)).toEqual((await tools.read(ref)).tools.map((t) => t.name));
  await tools.put(ref, []);
  expect((await tools.read(ref)).tools).toEqual([]);
  events = await log.history(ref);
  expect(events.map((e) => e.data)).toEqual([
    { tools: ['fake_create_ticket', 'lookup'], count: 2 },
    { tools: ['lookup'], count: 1 },
    { tools: [], count: 0 },
  ]);
  expect(rebuildClientToolNames(events)).toEqual([]);
  expect(await sessions.get(ref)).toEqual(rebuildSession(events));
});

test('putIfUnchanged writes only over the list it read, keeping who registered each tool', async () => {
  const ref = newRef();
  const empty = await tools.read(ref);
  expect(empty).toEqual({ tools: [], version: '' });
  const operatorTicket = { ...ticket, registeredBy: 'operator' as const };
  expect(await tools.putIfUnchanged(ref, [operatorTicket], empty.version)).toBe(true);
  const first = await tools.read(ref);
  expect(first.tools).toEqual([operatorTicket]);
  expect(first.version).toMatch(/^[0-9a-f]{24}$/);
  expect(await tools.version(ref)).toBe(first.version);

  // Another registration lands between the read and the write: the stale merge writes nothing.
  await tools.put(ref, [lookup]);
  expect(await tools.putIfUnchanged(ref, [operatorTicket, { ...lookup, registeredBy: 'agent' }], first.version)).toBe(false);
  expect((await tools.read(ref)).tools).toEqual([lookup]);
  // Nor over a list that is gone (stale version '' over a stored list).
  expect(await tools.putIfUnchanged(ref, [], '')).toBe(false);
  const second = await tools.read(ref);
  expect(await tools.putIfUnchanged(ref, [{ ...lookup, registeredBy: 'agent' }], second.version)).toBe(true);
  expect((await tools.read(ref)).tools).toEqual([{ ...lookup, registeredBy: 'agent' }]);
  expect((await log.history(ref)).map((e) => e.data)).toEqual([
    { tools: ['fake_create_ticket'], count: 1 },
    { tools: ['lookup'], count: 1 },
    { tools: ['lookup'], count: 1 },
  ]);
});

test('every registration gets a new version, equal list or not; the staged list is gone after it', async () => {
  const ref = newRef();
  expect(await tools.version(ref)).toBe('');
  await tools.put(ref, [lookup]);
  const first = await tools.version(ref);
  await tools.put(ref, [lookup]);
  const second = await tools.version(ref);
  expect(second).not.toBe(first);
  expect((await tools.read(ref)).version).toBe(second);
  expect(await redis.keys(`${keys.clientTools(ref)}-staged:*`)).toEqual([]);
  // A merge over a version that is not the stored one leaves no staged list behind either.
  expect(await tools.putIfUnchanged(ref, [lookup], first)).toBe(false);
  expect(await redis.keys(`${keys.clientTools(ref)}-staged:*`)).toEqual([]);
  expect((await tools.read(ref)).tools).toEqual([lookup]);
});

test('a list stored before versions were kept is versioned by its SHA-1, and merges over it still work', async () => {
  const ref = newRef();
  await tools.put(ref, [lookup]);
  await redis.hdel(keys.session(ref), 'toolsVersion');
  const json = await redis.get(keys.clientTools(ref));
  const sha1 = createHash('sha1').update(json!, 'utf8').digest('hex');
  expect(await tools.version(ref)).toBe(sha1);
  expect((await tools.read(ref)).version).toBe(sha1);
  expect(await tools.putIfUnchanged(ref, [ticket], 'f'.repeat(40))).toBe(false);
  expect(await tools.putIfUnchanged(ref, [ticket], sha1)).toBe(true);
  expect((await tools.read(ref)).tools).toEqual([ticket]);
  expect(await tools.version(ref)).toMatch(/^[0-9a-f]{24}$/);
});

test('a staged list that is missing (its SET never landed) writes nothing and says so', async () => {
  const ref = newRef();
  await tools.put(ref, [lookup]);
  const staged = keys.stagedClientTools(ref, 'gone');
  const run = ScriptLoader.default().run(
    redis,
    'register-tools',
    [...keys.scriptKeys(ref, ''), keys.clientTools(ref), staged],
    [JSON.stringify({ tools: ['x'], count: 1 }), 'gone'],
  );
  await expect(run).rejects.toThrow('the staged client tool list is missing; register the tools again');
  expect((await tools.read(ref)).tools).toEqual([lookup]);
  expect(await log.history(ref)).toHaveLength(1);
});

test('a list past the bulk size is stored and read back byte for byte, its version with it', async () => {
  const ref = newRef();
  const big: ClientTool[] = Array.from({ length: 40 }, (_, i) => ({
    name: `big_${i}`,
    description: 'é'.repeat(8000),
    inputSchema: { type: 'object' },
  }));
  await tools.put(ref, big);
  const json = JSON.stringify(big);
  expect(Buffer.byteLength(json)).toBeGreaterThan(256 * 1024);
  expect((await tools.getJsonBytes(ref))?.toString('utf8')).toBe(json);
  const snapshot = await tools.snapshot(ref);
  expect({ version: snapshot.version, text: snapshot.bytes?.toString('utf8') }).toEqual({ version: await tools.version(ref), text: json });
  expect((await tools.read(ref)).tools).toEqual(big);
});

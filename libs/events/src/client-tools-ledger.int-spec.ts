import type { Redis } from 'ioredis';
import type { ClientTool, SessionRef } from '@codemode/contracts';
import { ClientToolsLedger } from './client-tools-ledger';
import { EventLog } from './event-log';
import { KeySpace } from './keys';
import { rebuildClientToolNames } from './projections/rebuild-client-tools';
import { rebuildSession } from './projections/rebuild-session';
import { SessionLedger } from './session-ledger';
import { deleteKeys, testPrefix, testRedis } from './test-support';

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
  await deleteKeys(redis, prefix);
  await redis.quit();
});

test('put creates the session, stores the full list, and logs names and count only', async () => {
  const ref = newRef();
  expect(await tools.get(ref)).toEqual([]);
  expect(await sessions.get(ref)).toBeNull();
  const { eventId } = await tools.put(ref, [ticket, lookup]);
  expect(await tools.get(ref)).toEqual([ticket, lookup]);
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
  expect(await tools.get(ref)).toEqual([lookup]);
  let events = await log.history(ref);
  expect(rebuildClientToolNames(events)).toEqual((await tools.get(ref)).map((t) => t.name));
  await tools.put(ref, []);
  expect(await tools.get(ref)).toEqual([]);
  events = await log.history(ref);
  expect(events.map((e) => e.data)).toEqual([
    { tools: ['fake_create_ticket', 'lookup'], count: 2 },
    { tools: ['lookup'], count: 1 },
    { tools: [], count: 0 },
  ]);
  expect(rebuildClientToolNames(events)).toEqual([]);
  expect(await sessions.get(ref)).toEqual(rebuildSession(events));
});

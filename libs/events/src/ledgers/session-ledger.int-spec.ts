import type { Redis } from 'ioredis';
import { InvalidArgumentError } from '../platform/errors';
import { EventLog } from '../log/event-log';
import { KeySpace } from '../platform/keys';
import { rebuildSession } from '../log/projections/rebuild-session';
import { RunLedger } from '../runs/run-ledger';
import { SessionLedger } from './session-ledger';
import { deleteKeys, failed, newRunId, requestData, testPrefix, testRedis } from '../test-support';

const prefix = testPrefix('sessions');
const keys = new KeySpace(prefix);
let redis: Redis;
let sessions: SessionLedger;
let log: EventLog;

beforeAll(async () => {
  redis = await testRedis('sessions');
  sessions = new SessionLedger(redis, keys);
  log = new EventLog(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

test('configure creates, merges per field, and null removes an override', async () => {
  const ref = { tenant: 'acme', sessionId: 'cfg' };
  expect(await sessions.get(ref)).toBeNull();
  expect(await sessions.settings(ref)).toEqual({ settings: null, version: '0' });
  const first = await sessions.configure(ref, { agentId: 'agent-1', codeMode: { timeoutMs: 500, memoryLimitBytes: 2097152 } });
  expect(first).toMatchObject({ agentId: 'agent-1', codeMode: { timeoutMs: 500, memoryLimitBytes: 2097152 }, shell: {} });
  expect(first.createdAt).toBe(first.updatedAt);

  const second = await sessions.configure(ref, { codeMode: { timeoutMs: null, maxOutputBytes: 2048 }, shell: { backgroundMs: 100 } });
  expect(second).toMatchObject({
    agentId: 'agent-1',
    codeMode: { memoryLimitBytes: 2097152, maxOutputBytes: 2048 },
    shell: { backgroundMs: 100 },
  });
  expect(second.codeMode).not.toHaveProperty('timeoutMs');
  // What exec reads: the same settings as the full view, without its counts.
  const { counts, ...view } = (await sessions.get(ref))!;
  expect(counts.events).toBe(2);
  // Each configuration moves the version request-run checks.
  expect(await sessions.settings(ref)).toEqual({ settings: view, version: '2' });
  expect(second.createdAt).toBe(first.createdAt);

  const third = await sessions.configure(ref, { agentId: null, shell: { backgroundMs: null } });
  expect(third).toMatchObject({ agentId: null, shell: {}, codeMode: { memoryLimitBytes: 2097152, maxOutputBytes: 2048 } });

  const events = await log.history(ref);
  expect(events.map((e) => e.type)).toEqual(['session.configured', 'session.configured', 'session.configured']);
  expect(events[2].data).toEqual({ agentId: null, codeMode: third.codeMode, shell: {}, notifyUrl: null });
  const record = await sessions.get(ref);
  expect(record).toEqual({ ...third, counts: { runs: 0, events: 3, transcriptEntries: 0 } });
  expect(record).toEqual(rebuildSession(events));
});

test('agents (SPEC §15) is kept until set again, false by default, and rebuilt from the log', async () => {
  const ref = { tenant: 'acme', sessionId: 'agents' };
  expect((await sessions.configure(ref, {})).agents).toBe(false);
  expect((await sessions.configure(ref, { agents: true })).agents).toBe(true);
  expect((await sessions.configure(ref, { agentId: 'a' })).agents).toBe(true);
  expect((await sessions.settings(ref)).settings?.agents).toBe(true);
  const events = await log.history(ref);
  expect(events.map((event) => event.data.agents)).toEqual([undefined, true, true]);
  expect(rebuildSession(events)?.agents).toBe(true);
  expect((await sessions.configure(ref, { agents: false })).agents).toBe(false);
  expect((await sessions.get(ref))?.agents).toBe(false);
  expect(rebuildSession(await log.history(ref))?.agents).toBe(false);
});

test('notifyUrl and the shell switches: set, kept when omitted, null clears; the log and the rebuild agree', async () => {
  const ref = { tenant: 'acme', sessionId: 'notify' };
  const url = 'https://hooks.example/exits?k="1"';
  const first = await sessions.configure(ref, { notifyUrl: url, shell: { notifyOnExit: false, notifyOnExitEmptySuccess: true } });
  expect(first).toMatchObject({ notifyUrl: url, shell: { notifyOnExit: false, notifyOnExitEmptySuccess: true } });
  const kept = await sessions.configure(ref, { agentId: 'a', shell: { notifyOnExit: null } });
  expect(kept).toMatchObject({ notifyUrl: url, shell: { notifyOnExitEmptySuccess: true } });
  expect(kept.shell).not.toHaveProperty('notifyOnExit');
  expect((await sessions.settings(ref)).settings?.notifyUrl).toBe(url);
  const cleared = await sessions.configure(ref, { notifyUrl: null });
  expect(cleared.notifyUrl).toBeNull();
  const events = await log.history(ref);
  expect(events.map((e) => (e.data as { notifyUrl?: unknown }).notifyUrl)).toEqual([url, url, null]);
  expect(await sessions.get(ref)).toEqual(rebuildSession(events));
});

test('get counts runs, events and transcript entries; matches the rebuild', async () => {
  const ref = { tenant: 'acme', sessionId: 'counted' };
  const runs = new RunLedger(redis, keys);
  await runs.request(ref, newRunId(), requestData());
  const second = newRunId();
  await runs.request(ref, second, requestData());
  await runs.abandonUnstarted(ref, second, failed('no worker'));
  await sessions.configure(ref, { agentId: 'a"\u00e9' });
  const record = await sessions.get(ref);
  expect(record?.counts).toEqual({ runs: 2, events: 4, transcriptEntries: 3 });
  expect(record?.agentId).toBe('a"\u00e9');
  expect(record).toEqual(rebuildSession(await log.history(ref)));
});

test('configure rejects non-integer overrides before writing', async () => {
  const ref = { tenant: 'acme', sessionId: 'bad' };
  await expect(sessions.configure(ref, { codeMode: { timeoutMs: 1.5 } })).rejects.toBeInstanceOf(InvalidArgumentError);
  await expect(sessions.configure(ref, { codeMode: { timeoutMs: 1e15 } })).rejects.toBeInstanceOf(InvalidArgumentError);
  expect(await log.exists(ref)).toBe(false);
});

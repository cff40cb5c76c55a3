import type { Redis } from 'ioredis';
import { decodeEventData, EVENT_TYPES, platformSettledData, toolSettledData, type EventType, type SessionRef } from '@codemode/contracts';
import { ApprovalLedger } from '../ledgers/approval-ledger';
import { ClientToolsLedger } from '../ledgers/client-tools-ledger';
import { SkillLedger } from '../ledgers/skill-ledger';
import { EventLog } from './event-log';
import { KeySpace } from '../platform/keys';
import { LiveRunIndex } from '../runs/parked-run-index';
import { RunEnds } from '../runs/run-ends';
import { RunLedger } from '../runs/run-ledger';
import { SessionLedger } from '../ledgers/session-ledger';
import { StoreLedger } from '../ledgers/store-ledger';
import { completed, deleteKeys, failed, newRunId, requestData, testPrefix, testRedis, waiting } from '../test-support';

const prefix = testPrefix('event-data');
const keys = new KeySpace(prefix);
let redis: Redis;
let log: EventLog;
let runs: RunLedger;

beforeAll(async () => {
  redis = await testRedis('event-data');
  log = new EventLog(redis, keys);
  runs = new RunLedger(redis, keys);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

const parkedData = (runId: string) => ({
  result: waiting(runId),
  expiresAt: new Date(Date.now() + 60_000).toISOString(),
  snapshotBytes: 10,
  journal: { calls: [['bridge:callValue:1', '{}']] as [string, string][], settled: [], clock: [1] },
});

async function startedRun(ref: SessionRef, restartSafe = false): Promise<string> {
  const runId = newRunId();
  await runs.request(ref, runId, { ...requestData(), restartSafe }, { idempotencyKey: restartSafe ? 'k-1' : undefined });
  await runs.start(ref, runId, {
    workerId: 'w-1',
    epoch: 1,
    replyTo: '',
    recovery: restartSafe ? { seed: [1, 2, 3, 4], catalogHash: 'h' } : undefined,
  });
  return runId;
}

describe('event data schemas (libs/contracts/src/event-data.ts)', () => {
  it("decode every event each writer writes: the scripts' and the typed appends'", async () => {
    const ref: SessionRef = { tenant: 'acme', sessionId: 's-all' };
    await new SessionLedger(redis, keys).configure(ref, { agentId: 'agent', codeMode: { timeoutMs: 700 }, agents: true });
    await new ClientToolsLedger(redis, keys).put(ref, [{ name: 'ask', description: 'Ask', inputSchema: { type: 'object' } }]);
    await new SkillLedger(redis, keys).putSession(ref, { names: ['guide'], descriptions: ['A guide'], contents: ['# Guide'] });
    await runs.reject(ref, 'exec', { code: 1 }, failed('bad input', 'invalid_input'));

    const runId = await startedRun(ref, true);
    const call = { runId, epoch: 1 };
    await log.append(ref, {
      type: 'tool.called',
      ...call,
      data: { callId: 'bridge:callValue:1', tool: 'ask', source: 'client', inputBytes: 2, answeredBy: 'platform', input: {} },
    });
    await log.append(ref, { type: 'tool.blocked', ...call, data: { callId: 'bridge:callValue:2', tool: 'rm' } });
    const approvals = new ApprovalLedger(redis, keys);
    const approvalId = 'ap_00000000-0000-4000-8000-000000000001';
    await approvals.request(ref, { approvalId, runId, epoch: 1, callId: 'bridge:callValue:3', tool: 'ls', input: { path: '/' } });
    await approvals.decide(ref, approvalId, { decision: 'approve' });
    const worker = { callId: 'bridge:callValue:3', tool: 'ls', durationMs: 5 };
    await log.append(ref, { type: 'tool.settled', ...call, data: toolSettledData(worker, { ok: true, value: ['a'] }, true) });
    await log.append(ref, {
      type: 'tool.settled',
      ...call,
      data: toolSettledData(worker, { ok: false, error: { name: 'TypeError', message: 'no' } }, false),
    });
    await log.append(ref, {
      type: 'tool.settled',
      ...call,
      data: platformSettledData({ id: 'bridge:callValue:1', ok: false, error: 'nope' }, true),
    });
    await new StoreLedger(redis, keys).commit(ref, {
      runId,
      epoch: 1,
      writes: new Map([
        ['k', '1'],
        ['gone', null],
      ]),
      capacityBytes: 1 << 20,
    });
    await runs.append(ref, { type: 'run.parked', ...call, data: parkedData(runId) });
    await runs.reserveResume(ref, runId, 'tok', 10_000);
    await runs.resume(ref, runId, { token: 'tok', workerId: 'w-2', epoch: 1, replyTo: '', input: { more: true } });
    await runs.takeOver(ref, runId, { workerId: 'w-3', from: { owner: 'w-2', epoch: 1 }, reason: 'stalled' });
    await runs.append(ref, { type: 'run.parked', runId, epoch: 2, data: parkedData(runId) });
    await runs.release(ref, runId, { workerId: 'w-3', epoch: 2, reason: 'shutdown' });

    const done = await startedRun(ref);
    await runs.finish(ref, done, { epoch: 1, type: 'run.completed', result: completed(2) });
    const unstarted = newRunId();
    await runs.request(ref, unstarted, requestData());
    await runs.abandonUnstarted(ref, unstarted, failed('no worker'));
    const ends = new RunEnds(runs, new LiveRunIndex(redis, keys));
    await ends.lose({ ref, runId: await startedRun(ref), epoch: 1 }, { reason: 'owner gone' });
    const stalled = await startedRun(ref);
    await runs.append(ref, { type: 'run.lost', runId: stalled, epoch: 1, data: { reason: 'stalled', result: failed('stalled') } });
    const expired = await startedRun(ref);
    await runs.append(ref, { type: 'run.parked', runId: expired, epoch: 1, data: parkedData(expired) });
    await ends.expire({ ref, runId: expired, epoch: 1 });
    const idle = await startedRun(ref);
    await runs.append(ref, { type: 'run.parked', runId: idle, epoch: 1, data: parkedData(idle) });
    const { lastEvent } = await runs.readIdleWait(ref, idle);
    expect(await runs.answerIdleWait(ref, { runId: idle, lastEvent }, { input: { runId: idle }, result: waiting(idle) })).toBe(true);

    const shell = { sessionId: 'sh-1', scope: 'session' };
    await log.append(ref, {
      type: 'shell.started',
      data: { ...shell, command: 'ls', cwd: '/w', pid: 7, pty: false, startedAt: 1, backgrounded: false },
    });
    await log.append(ref, { type: 'shell.output', data: { ...shell, stream: 'stdout', text: 'a\n' } });
    const exited = {
      status: 'completed',
      exitCode: 0,
      exitSignal: null,
      timedOut: false,
      startedAt: 1,
      endedAt: 2,
      durationMs: 1,
    } as const;
    await log.append(ref, {
      type: 'shell.exited',
      data: { ...shell, ...exited, backgrounded: false, droppedChars: 0, timeoutSeconds: 30 },
    });
    await log.append(ref, { type: 'shell.notified', data: { ...shell, status: 'delivered', attempts: 1, httpStatus: 204 } });
    await log.append(ref, { type: 'shell.removed', data: shell });

    const events = await log.history(ref);
    expect(events.filter((event) => decodeEventData(event.type, event.data) === null)).toEqual([]);
    const written = new Set<EventType>(events.map((event) => event.type));
    // run.output is listed by the contract but written by nothing.
    expect(EVENT_TYPES.filter((type) => !written.has(type))).toEqual(['run.output']);
  });
});

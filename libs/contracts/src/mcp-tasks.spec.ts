import { mcpTaskState, platformWaitsOf, WAITING_FOR_PLATFORM, type McpTaskRecord } from './mcp-tasks';
import type { CodeModeResult } from './result';
import type { RunView } from './run';

const telemetry = {
  catalogSize: 0,
  sources: { openclaw: 0, mcp: 0, client: 0 },
  searchCount: 0,
  describeCount: 0,
  callCount: 0,
  counterScope: 'run' as const,
  visibleTools: ['exec', 'wait'] as ['exec', 'wait'],
};
const done: CodeModeResult = { status: 'completed', value: 1, replaySafe: false, telemetry };
const later: CodeModeResult = { status: 'completed', value: 2, replaySafe: false, telemetry };
const parked: CodeModeResult = {
  status: 'waiting',
  runId: 'cm_1',
  reason: 'pending_tools',
  pendingToolCalls: [
    { id: 'bridge:callValue:1', method: 'callValue', tool: 'crm.lookup' },
    { id: 'bridge:callValue:2', method: 'callValue', tool: 'crm.lookup' },
    { id: 'bridge:callValue:3', method: 'callValue', tool: 'mail.send' },
  ],
  replaySafe: false,
  telemetry,
};

const record = (over: Partial<McpTaskRecord> = {}): McpTaskRecord => ({
  taskId: 'cm_1',
  kind: 'exec',
  runId: 'cm_1',
  awaitResults: false,
  createdAt: 1,
  ttlMs: 60_000,
  result: null,
  endedAt: null,
  cancelled: false,
  ...over,
});
const run = (status: RunView['status'], lastResult: CodeModeResult | null): RunView => ({
  runId: 'cm_1',
  sessionId: 's',
  title: 't',
  status,
  restartSafe: false,
  owner: null,
  epoch: 1,
  createdAt: '',
  startedAt: null,
  endedAt: null,
  parkedAt: null,
  expiresAt: null,
  updatedAt: '',
  lastResult,
});

describe('mcpTaskState (SPEC §14 Tasks)', () => {
  it('a task whose answer is fixed answers it, whatever the run did since', () => {
    expect(mcpTaskState(record({ result: done }), run('completed', later))).toEqual({ status: 'completed', result: done });
  });

  it('a cancelled task is cancelled, before anything else', () => {
    expect(mcpTaskState(record({ cancelled: true, result: done }), run('running', null))).toEqual({ status: 'cancelled', result: done });
  });

  it('is working while the run runs, and completed with the run answer once it ended (a failed cell too)', () => {
    expect(mcpTaskState(record(), run('requested', null))).toEqual({ status: 'working' });
    expect(mcpTaskState(record(), run('running', null))).toEqual({ status: 'working' });
    const failed: CodeModeResult = {
      ...done,
      status: 'failed',
      error: 'boom',
      code: 'runtime_unavailable',
      failurePhase: 'guest',
      bridgeDispatchStarted: false,
    };
    expect(mcpTaskState(record({ kind: 'wait' }), run('failed', failed))).toEqual({ status: 'completed', result: failed });
  });

  it('a wait on a run that had ended before it works until its own answer (the ended-run refusal) is settled', () => {
    const ended = { ...run('completed', later), endedAt: '2026-12-05T06:00:00.000Z' };
    const endedMs = Date.parse(ended.endedAt);
    expect(mcpTaskState(record({ kind: 'wait', createdAt: endedMs + 5 }), ended)).toEqual({ status: 'working' });
    expect(mcpTaskState(record({ kind: 'wait', createdAt: endedMs - 5 }), ended)).toEqual({ status: 'completed', result: later });
    expect(mcpTaskState(record({ createdAt: endedMs + 5 }), ended)).toEqual({ status: 'completed', result: later });
  });

  it('an exec that does not await its results is answered by a parked run; one that does stays working, waiting for the platform', () => {
    expect(mcpTaskState(record(), run('waiting', parked))).toEqual({ status: 'completed', result: parked });
    expect(mcpTaskState(record({ awaitResults: true }), run('waiting', parked))).toEqual({
      status: 'working',
      statusMessage: `${WAITING_FOR_PLATFORM}crm.lookup, mail.send`,
    });
    expect(mcpTaskState(record({ kind: 'wait' }), run('waiting', parked))).toEqual({
      status: 'working',
      statusMessage: `${WAITING_FOR_PLATFORM}crm.lookup, mail.send`,
    });
  });

  it('a run gone before any answer was known is an unknown task', () => {
    expect(mcpTaskState(record(), null)).toBeNull();
  });

  it('a running run waiting on platform calls or approvals says so', () => {
    expect(mcpTaskState(record({ awaitResults: true }), run('running', null), ['agents.run', 'approval ap_1'])).toEqual({
      status: 'working',
      statusMessage: `${WAITING_FOR_PLATFORM}agents.run, approval ap_1`,
    });
  });
});

describe('platformWaitsOf', () => {
  const called = (callId: string, tool: string, answeredBy?: 'platform') => ({
    type: 'tool.called' as const,
    data: { callId, tool, source: 'platform', inputBytes: 2, ...(answeredBy ? { answeredBy } : {}) },
  });
  it('names the open platform calls once and the undecided approvals', () => {
    const events = [
      called('bridge:callValue:1', 'agents.run', 'platform'),
      called('bridge:callValue:2', 'agents.run', 'platform'),
      called('bridge:callValue:3', 'crm.lookup'),
      called('bridge:callValue:4', 'ask', 'platform'),
      { type: 'tool.settled' as const, data: { callId: 'bridge:callValue:4', tool: 'ask', ok: true, durationMs: 1, resultBytes: 1 } },
      { type: 'approval.requested' as const, data: { approvalId: 'ap_1', runId: 'cm_1', callId: 'c', tool: 't', input: null } },
      { type: 'approval.requested' as const, data: { approvalId: 'ap_2', runId: 'cm_1', callId: 'd', tool: 't', input: null } },
      {
        type: 'approval.decided' as const,
        data: { approvalId: 'ap_1', runId: 'cm_1', callId: 'c', tool: 't', decision: 'approve', decidedAt: '2026-01-01T00:00:00Z' },
      },
    ];
    expect(platformWaitsOf(events)).toEqual(['agents.run', 'approval ap_2']);
  });
});

import { platformSettledData, toolSettledData, type EventData, type EventType } from '@codemode/contracts';
import type { LoggedEvent } from '@codemode/events';
import { restorePlan, type OpenCallRecord } from './restore-plan';

const catalog = {
  globals: [
    { metadata: { callableName: 'lookup', toolName: 'lookup', description: 'd', source: 'client' as const }, replaySafe: true },
    { metadata: { callableName: 'charge', toolName: 'charge', description: 'd', source: 'client' as const }, replaySafe: false },
    { metadata: { callableName: 'ask', toolName: 'ask', description: 'd', source: 'client' as const }, replaySafe: false },
    {
      metadata: { callableName: 'upsert', toolName: 'upsert', description: 'd', source: 'client' as const },
      replaySafe: false,
      idempotent: true,
    },
  ],
  mcp: [
    {
      serverIdentifier: 'crm',
      serverName: 'crm',
      tools: [
        {
          toolIdentifier: 'putRow',
          metadata: { callableName: 'MCP.crm.putRow', toolName: 'put_row', description: 'd', source: 'mcp' as const },
          idempotent: true,
        },
        {
          toolIdentifier: 'dropRow',
          metadata: { callableName: 'MCP.crm.dropRow', toolName: 'drop_row', description: 'd', source: 'mcp' as const },
        },
      ],
    },
  ],
};

let seq = 0;
function event<T extends EventType>(type: T, data: EventData<T>): LoggedEvent {
  seq += 1;
  return { id: `${seq}-0`, type, runId: 'cm_x', at: new Date(0).toISOString(), data, epoch: 1 };
}
/** `tool.called` as the worker writes it. */
function called(callId: string, tool: string, platform = false): LoggedEvent {
  return event('tool.called', { callId, tool, source: 'client', inputBytes: 2, ...(platform ? { answeredBy: 'platform' as const } : {}) });
}
function call(id: string, tool: string, inFlight = true): OpenCallRecord {
  return { id, method: 'callValue', args: { tool, input: {} }, inFlight };
}

describe('restorePlan (SPEC §12)', () => {
  it('answers from the log, keeps platform calls waiting, makes replay-safe calls again', () => {
    const events = [
      called('bridge:callValue:1', 'ask', true),
      called('bridge:callValue:2', 'ask', true),
      event('tool.settled', platformSettledData({ id: 'bridge:callValue:2', ok: true, value: { v: 7 } }, true)),
      called('bridge:callValue:3', 'lookup'),
    ];
    const calls = [call('bridge:callValue:1', 'ask'), call('bridge:callValue:2', 'ask'), call('bridge:callValue:3', 'lookup')];
    expect(restorePlan([...calls, { id: 'bridge:sleep:1', method: 'sleep', args: [5], inFlight: true }], events, catalog)).toEqual({
      answers: [{ id: 'bridge:callValue:2', ok: true, payload: '{"v":7}' }],
      redo: ['bridge:callValue:3'],
      platform: ['bridge:callValue:1'],
    });
  });

  it('answers a recorded failure with its name and message', () => {
    const failure = { ok: false, error: { name: 'TypeError', message: 'no' } } as const;
    const events = [event('tool.settled', toolSettledData({ callId: 'bridge:callValue:1', tool: 'charge', durationMs: 3 }, failure, true))];
    expect(restorePlan([call('bridge:callValue:1', 'charge')], events, catalog)).toEqual({
      answers: [{ id: 'bridge:callValue:1', ok: false, payload: '{"name":"TypeError","message":"no"}' }],
      redo: [],
      platform: [],
    });
  });

  it('loses an in-flight call of a tool that is not replay-safe and whose outcome the log does not have', () => {
    const events = [
      called('bridge:callValue:1', 'charge'),
      event(
        'tool.settled',
        toolSettledData({ callId: 'bridge:callValue:1', tool: 'charge', durationMs: 3 }, { ok: true, value: {} }, false),
      ),
    ];
    expect(restorePlan([call('bridge:callValue:1', 'charge')], events, catalog)).toEqual({ lost: 'bridge:callValue:1' });
    expect(restorePlan([{ id: 'bridge:namespace:1', method: 'namespace', args: {}, inFlight: true }], [], catalog)).toEqual({
      lost: 'bridge:namespace:1',
    });
  });

  it('makes in-flight calls of idempotent client and MCP tools again (SPEC §16), and loses other MCP calls', () => {
    const mcp = (n: number, tool: string): OpenCallRecord => ({
      id: `bridge:namespace:${n}`,
      method: 'namespace',
      args: { server: 'crm', tool, callableName: 'MCP.crm.x', args: [{}] },
      inFlight: true,
    });
    const events = [called('bridge:callValue:1', 'upsert'), called('bridge:namespace:1', 'MCP.crm.putRow')];
    expect(restorePlan([call('bridge:callValue:1', 'upsert'), mcp(1, 'put_row')], events, catalog)).toEqual({
      answers: [],
      redo: ['bridge:callValue:1', 'bridge:namespace:1'],
      platform: [],
    });
    expect(restorePlan([mcp(2, 'drop_row')], [called('bridge:namespace:2', 'MCP.crm.dropRow')], catalog)).toEqual({
      lost: 'bridge:namespace:2',
    });
  });

  it('makes a call still waiting for its approval again (never dispatched), but loses one approved and dispatched', () => {
    const asked = [
      event('approval.requested', { approvalId: 'ap_1', runId: 'cm_x', callId: 'bridge:callValue:5', tool: 'charge', input: {} }),
    ];
    expect(restorePlan([call('bridge:callValue:5', 'charge')], asked, catalog)).toEqual({
      answers: [],
      redo: ['bridge:callValue:5'],
      platform: [],
    });
    const dispatched = [...asked, called('bridge:callValue:5', 'charge')];
    expect(restorePlan([call('bridge:callValue:5', 'charge')], dispatched, catalog)).toEqual({ lost: 'bridge:callValue:5' });
  });

  it('leaves queued calls to start as usual, unless they were dispatched while parked', () => {
    const queued = call('bridge:callValue:4', 'charge', false);
    expect(restorePlan([queued], [], catalog)).toEqual({ answers: [], redo: [], platform: [] });
    expect(restorePlan([queued], [called('bridge:callValue:4', 'charge')], catalog)).toEqual({
      lost: 'bridge:callValue:4',
    });
  });
});

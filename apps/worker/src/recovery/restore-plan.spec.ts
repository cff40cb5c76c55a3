import type { LoggedEvent } from '@codemode/events';
import { restorePlan, type OpenCallRecord } from './restore-plan';

const catalog = {
  globals: [
    { metadata: { callableName: 'lookup', toolName: 'lookup', description: 'd', source: 'client' as const }, replaySafe: true },
    { metadata: { callableName: 'charge', toolName: 'charge', description: 'd', source: 'client' as const }, replaySafe: false },
    { metadata: { callableName: 'ask', toolName: 'ask', description: 'd', source: 'client' as const }, replaySafe: false },
  ],
  mcp: [],
};

let seq = 0;
function event(type: string, data: Record<string, unknown>): LoggedEvent {
  seq += 1;
  return { id: `${seq}-0`, type, runId: 'cm_x', at: new Date(0).toISOString(), data } as LoggedEvent;
}
function call(id: string, tool: string, inFlight = true): OpenCallRecord {
  return { id, method: 'callValue', args: { tool, input: {} }, inFlight };
}

describe('restorePlan (SPEC §12)', () => {
  it('answers from the log, keeps platform calls waiting, makes replay-safe calls again', () => {
    const events = [
      event('tool.called', { callId: 'bridge:callValue:1', tool: 'ask', answeredBy: 'platform' }),
      event('tool.called', { callId: 'bridge:callValue:2', tool: 'ask', answeredBy: 'platform' }),
      event('tool.settled', { callId: 'bridge:callValue:2', ok: true, source: 'client', answeredBy: 'platform', result: { v: 7 } }),
      event('tool.called', { callId: 'bridge:callValue:3', tool: 'lookup' }),
    ];
    const calls = [call('bridge:callValue:1', 'ask'), call('bridge:callValue:2', 'ask'), call('bridge:callValue:3', 'lookup')];
    expect(restorePlan([...calls, { id: 'bridge:sleep:1', method: 'sleep', args: [5], inFlight: true }], events, catalog)).toEqual({
      answers: [{ id: 'bridge:callValue:2', ok: true, payload: '{"v":7}' }],
      redo: ['bridge:callValue:3'],
      platform: ['bridge:callValue:1'],
    });
  });

  it('answers a recorded failure with its name and message', () => {
    const events = [event('tool.settled', { callId: 'bridge:callValue:1', ok: false, failure: { name: 'TypeError', message: 'no' } })];
    expect(restorePlan([call('bridge:callValue:1', 'charge')], events, catalog)).toEqual({
      answers: [{ id: 'bridge:callValue:1', ok: false, payload: '{"name":"TypeError","message":"no"}' }],
      redo: [],
      platform: [],
    });
  });

  it('loses an in-flight call of a tool that is not replay-safe and whose outcome the log does not have', () => {
    const events = [
      event('tool.called', { callId: 'bridge:callValue:1', tool: 'charge' }),
      event('tool.settled', { callId: 'bridge:callValue:1', ok: true, resultBytes: 2 }),
    ];
    expect(restorePlan([call('bridge:callValue:1', 'charge')], events, catalog)).toEqual({ lost: 'bridge:callValue:1' });
    expect(restorePlan([{ id: 'bridge:namespace:1', method: 'namespace', args: {}, inFlight: true }], [], catalog)).toEqual({
      lost: 'bridge:namespace:1',
    });
  });

  it('makes a call still waiting for its approval again (never dispatched), but loses one approved and dispatched', () => {
    const asked = [event('approval.requested', { approvalId: 'ap_1', runId: 'cm_x', callId: 'bridge:callValue:5', tool: 'charge' })];
    expect(restorePlan([call('bridge:callValue:5', 'charge')], asked, catalog)).toEqual({
      answers: [],
      redo: ['bridge:callValue:5'],
      platform: [],
    });
    const dispatched = [...asked, event('tool.called', { callId: 'bridge:callValue:5', tool: 'charge' })];
    expect(restorePlan([call('bridge:callValue:5', 'charge')], dispatched, catalog)).toEqual({ lost: 'bridge:callValue:5' });
  });

  it('leaves queued calls to start as usual, unless they were dispatched while parked', () => {
    const queued = call('bridge:callValue:4', 'charge', false);
    expect(restorePlan([queued], [], catalog)).toEqual({ answers: [], redo: [], platform: [] });
    expect(restorePlan([queued], [event('tool.called', { callId: 'bridge:callValue:4', tool: 'charge' })], catalog)).toEqual({
      lost: 'bridge:callValue:4',
    });
  });
});

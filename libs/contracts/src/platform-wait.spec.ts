import { platformSettledData, toolSettledData, type EventData } from './event-data';
import type { EventType } from './events';
import { awaitsOnlyPlatform, openPlatformCalls } from './platform-wait';
import type { CodeModeResult, PendingToolCall } from './result';

const event = <T extends EventType>(type: T, data: EventData<T>) => ({ type, data });
const called = (callId: string, platform: boolean) =>
  event('tool.called', { callId, tool: 'ask', source: 'client', inputBytes: 2, ...(platform ? { answeredBy: 'platform' as const } : {}) });

describe('openPlatformCalls', () => {
  it('answers the platform calls not settled yet', () => {
    const events = [
      called('bridge:callValue:1', true),
      called('bridge:callValue:2', true),
      called('bridge:callValue:3', false),
      event('tool.settled', platformSettledData({ id: 'bridge:callValue:2', ok: true, value: 1 }, true)),
      called('bridge:callValue:4', true),
    ];
    expect([...openPlatformCalls(events)]).toEqual(['bridge:callValue:1', 'bridge:callValue:4']);
  });

  it('counts any settlement of a call, with or without its outcome', () => {
    const settled = toolSettledData({ callId: 'bridge:callValue:1', tool: 'ask', durationMs: 1 }, { ok: true, value: 1 }, false);
    expect([...openPlatformCalls([called('bridge:callValue:1', true), event('tool.settled', settled)])]).toEqual([]);
  });

  it('reads data that does not decode as no call and no settlement', () => {
    const malformed = [
      { type: 'tool.called' as const, data: { callId: 'bridge:callValue:9', answeredBy: 'platform' } },
      { type: 'tool.settled' as const, data: { callId: 'bridge:callValue:1' } },
    ];
    expect([...openPlatformCalls([called('bridge:callValue:1', true), ...malformed])]).toEqual(['bridge:callValue:1']);
  });
});

describe('awaitsOnlyPlatform', () => {
  const telemetry = {
    catalogSize: 1,
    sources: { openclaw: 0, mcp: 0, client: 1 },
    searchCount: 0,
    describeCount: 0,
    callCount: 2,
    counterScope: 'run',
    visibleTools: ['exec', 'wait'] as ['exec', 'wait'],
  };
  const ask = (n: number): PendingToolCall => ({ id: `bridge:callValue:${n}`, method: 'callValue', tool: 'ask' });
  const waiting = (pendingToolCalls: PendingToolCall[], reason: 'pending_tools' | 'yield' = 'pending_tools'): CodeModeResult => ({
    status: 'waiting',
    runId: 'run-1',
    reason,
    pendingToolCalls,
    replaySafe: false,
    telemetry,
  });
  /** What the log says of two platform calls, after `more` events. */
  const openAfter = (...more: { type: EventType; data: unknown }[]) =>
    openPlatformCalls([called('bridge:callValue:1', true), called('bridge:callValue:2', true), ...more]);

  it('a run waiting only for platform calls nobody answered has nothing to do', () => {
    expect(awaitsOnlyPlatform(waiting([ask(1), ask(2)]), openAfter())).toBe(true);
  });

  it('one of them answered: the wait resumes the run', () => {
    const answered = event('tool.settled', platformSettledData({ id: 'bridge:callValue:2', ok: true, value: 1 }, false));
    expect(awaitsOnlyPlatform(waiting([ask(1), ask(2)]), openAfter(answered))).toBe(false);
  });

  it('a pending timer, yield, or call without an open platform tool.called (approval, queued, webhook) is work', () => {
    const open = openAfter();
    expect(awaitsOnlyPlatform(waiting([ask(1), { id: 'bridge:sleep:1', method: 'sleep' }]), open)).toBe(false);
    expect(awaitsOnlyPlatform(waiting([{ id: 'bridge:yield:1', method: 'yield' }], 'yield'), open)).toBe(false);
    // An approval-held or queued call has no tool.called yet; a webhook call's is not the platform's.
    expect(awaitsOnlyPlatform(waiting([ask(1), ask(3)]), open)).toBe(false);
    const webhook = openPlatformCalls([called('bridge:callValue:1', false)]);
    expect(awaitsOnlyPlatform(waiting([ask(1)]), webhook)).toBe(false);
  });

  it('only a waiting answer with pending calls can have nothing to do', () => {
    const open = openAfter();
    expect(awaitsOnlyPlatform(waiting([]), open)).toBe(false);
    expect(awaitsOnlyPlatform(null, open)).toBe(false);
    expect(awaitsOnlyPlatform({ status: 'completed', value: 1, replaySafe: false, telemetry }, open)).toBe(false);
  });
});

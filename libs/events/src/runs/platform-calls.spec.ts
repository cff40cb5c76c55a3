import { platformSettledData, type EventData, type EventType } from '@codemode/contracts';
import { recordsPlatformAnswer } from './platform-calls';

const event = <T extends EventType>(type: T, data: EventData<T>) => ({ type, data });
const called = (callId: string, platform: boolean) =>
  event('tool.called', { callId, tool: 'ask', source: 'client', inputBytes: 2, ...(platform ? { answeredBy: 'platform' as const } : {}) });

describe('recordsPlatformAnswer', () => {
  const answer = { id: 'bridge:callValue:1', ok: true, value: { n: 7 } };
  // As the log returns it: the appended data, through JSON.
  const logged = (data: unknown) => ({ type: 'tool.settled' as const, data: JSON.parse(JSON.stringify(data)) as unknown });

  it('is true when the log settled the call with this very answer (an answer delivered twice)', () => {
    expect(recordsPlatformAnswer([called(answer.id, true), logged(platformSettledData(answer, true))], answer)).toBe(true);
  });

  it('is false for an open call, another answer of the call, or another call', () => {
    expect(recordsPlatformAnswer([called(answer.id, true)], answer)).toBe(false);
    expect(recordsPlatformAnswer([logged(platformSettledData({ ...answer, value: { n: 8 } }, true))], answer)).toBe(false);
    expect(recordsPlatformAnswer([logged(platformSettledData({ id: 'bridge:callValue:1', ok: false, error: 'no' }, true))], answer)).toBe(
      false,
    );
    expect(recordsPlatformAnswer([logged(platformSettledData({ ...answer, id: 'bridge:callValue:2' }, true))], answer)).toBe(false);
  });
});

import { RunBridge } from './run-bridge';

type Sent = [string, boolean, string];

describe('RunBridge', () => {
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  it('answers sleep with a host timer that cancel stops', async () => {
    const sent: Sent[] = [];
    const bridge = new RunBridge(undefined, (...args) => sent.push(args));
    bridge.dispatch('bridge:sleep:1', 'sleep', '[5]');
    bridge.dispatch('bridge:sleep:2', 'sleep', '[1]');
    bridge.cancel('bridge:sleep:1');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(sent).toEqual([['bridge:sleep:2', true, 'null']]);
    expect(bridge.dispatchStarted).toBe(true);
  });

  it('passes other methods to the host and relays values and errors as JSON', async () => {
    const sent: Sent[] = [];
    const host = {
      dispatch: jest.fn(async (call: { method: string; args: unknown }) => {
        if (call.method === 'search') return { hits: call.args };
        throw new RangeError('no such tool');
      }),
    };
    const bridge = new RunBridge(host, (...args) => sent.push(args));
    bridge.dispatch('bridge:search:1', 'search', '["q"]');
    bridge.dispatch('bridge:callValue:1', 'callValue', '[]');
    await flush();
    expect(host.dispatch.mock.calls[0][0]).toEqual({ id: 'bridge:search:1', method: 'search', args: ['q'] });
    expect(sent).toEqual([
      ['bridge:search:1', true, '{"hits":["q"]}'],
      ['bridge:callValue:1', false, '{"name":"RangeError","message":"no such tool"}'],
    ]);
  });

  it('rejects non-sleep methods without a host, and sends nothing after close', async () => {
    const sent: Sent[] = [];
    const bridge = new RunBridge(undefined, (...args) => sent.push(args));
    bridge.dispatch('bridge:search:1', 'search', '[]');
    await flush();
    expect(sent).toEqual([
      ['bridge:search:1', false, '{"name":"Error","message":"code mode bridge method search is not available in this run"}'],
    ]);
    let signal: AbortSignal | undefined;
    const late = new RunBridge({ dispatch: async (_call, s) => ((signal = s), 1) }, (...args) => sent.push(args));
    late.dispatch('bridge:sleep:1', 'sleep', '[1]');
    late.dispatch('bridge:api:1', 'api', '[]');
    late.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent).toHaveLength(1);
    expect(signal?.aborted).toBe(true);
  });
});

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

  it('holds every request, a timer included, until the host has its claim written, then makes them in order', async () => {
    const sent: Sent[] = [];
    let claim!: { resolve: () => void; reject: (e: Error) => void };
    const claimed = new Promise<void>((resolve, reject) => (claim = { resolve, reject }));
    let gated = true;
    const host = {
      beforeDispatch: () => (gated ? claimed : undefined),
      dispatch: jest.fn(async (call: { id: string }) => call.id),
    };
    const bridge = new RunBridge(host, (...args) => sent.push(args));
    bridge.dispatch('bridge:search:1', 'search', '[]');
    bridge.dispatch('bridge:sleep:1', 'sleep', '[0]');
    bridge.dispatch('bridge:sleep:2', 'sleep', '[0]');
    bridge.dispatch('bridge:api:1', 'api', '[]');
    bridge.cancel('bridge:sleep:2');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(host.dispatch).not.toHaveBeenCalled();
    expect(sent).toEqual([]);
    expect(bridge.hostCallsInFlight).toBe(3);
    expect(bridge.dispatchStarted).toBe(true);
    gated = false;
    claim.resolve();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(host.dispatch.mock.calls.map(([call]) => call.id)).toEqual(['bridge:search:1', 'bridge:api:1']);
    expect(sent.map(([id]) => id).sort()).toEqual(['bridge:api:1', 'bridge:search:1', 'bridge:sleep:1']);
    expect(bridge.hostCallsInFlight).toBe(0);
  });

  it('rejects the held requests with the claim error when it is declined, and makes none of them', async () => {
    const sent: Sent[] = [];
    const host = {
      beforeDispatch: () => Promise.reject(new Error('code mode run is no longer waiting for this worker; the cell is stopped.')),
      dispatch: jest.fn(async () => 1),
    };
    const bridge = new RunBridge(host, (...args) => sent.push(args));
    bridge.dispatch('bridge:store:1', 'store', '{"key":"k","value":1}');
    bridge.dispatch('bridge:sleep:1', 'sleep', '[0]');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(host.dispatch).not.toHaveBeenCalled();
    const refusal = '{"name":"Error","message":"code mode run is no longer waiting for this worker; the cell is stopped."}';
    expect(sent).toEqual([
      ['bridge:store:1', false, refusal],
      ['bridge:sleep:1', false, refusal],
    ]);
  });
});

import { BridgeLedger } from './bridge-ledger';

describe('BridgeLedger holds (SPEC §11 approvals)', () => {
  it('frees the slot of a held call and readmits it at the head of the queue once approved', () => {
    const ledger = new BridgeLedger();
    const held = ledger.add('callValue', '{}', false);
    const other = ledger.add('callValue', '{}', true);
    expect(ledger.inFlight).toBe(1);
    expect(ledger.hold(held)).toBe(true);
    expect(ledger.hold(held)).toBe(false);
    expect(ledger.inFlight).toBe(0);
    expect(ledger.takeQueued()).toEqual([other, 'callValue', '{}', false]);
    expect(ledger.unhold(held)).toBe(true);
    expect(ledger.isQueued(held)).toBe(true);
    expect(ledger.takeQueued()).toEqual([held, 'callValue', '{}', true]);
    expect(ledger.inFlight).toBe(2);
  });

  it('settles a held call without giving back a slot it does not hold', () => {
    const ledger = new BridgeLedger();
    const held = ledger.add('callValue', '{}', false);
    ledger.add('sleep', '[10]', false);
    ledger.hold(held);
    expect(ledger.answer(held)).toBe(true);
    expect(ledger.inFlight).toBe(1);
    expect(ledger.unhold(held)).toBe(false);
  });

  it('stops the clock only when every unsettled call is held, and parks held calls with a yield', () => {
    const ledger = new BridgeLedger();
    const held = ledger.add('callValue', '{}', false);
    const timer = ledger.add('sleep', '[10]', false);
    ledger.hold(held);
    expect(ledger.onlyHeld()).toBe(false);
    expect(ledger.onlyParkable()).toBe(false);
    ledger.answer(timer);
    expect(ledger.onlyHeld()).toBe(true);
    ledger.close(timer);
    expect(ledger.onlyParkable()).toBe(false);
    ledger.add('yield', '[null]', false);
    expect(ledger.onlyHeld()).toBe(false);
    expect(ledger.onlyParkable()).toBe(true);
    expect(ledger.hold(ledger.ids('yield')[0])).toBe(false);
  });

  it('parks on yields alone, or on platform calls with requests queued behind them', () => {
    const ledger = new BridgeLedger();
    expect(ledger.onlyYields()).toBe(false);
    expect(ledger.onlyParkable()).toBe(false);
    const yielded = ledger.add('yield', '[null]', false);
    expect(ledger.onlyYields()).toBe(true);
    const platform = ledger.add('callValue', '{}', false);
    const queued = ledger.add('callValue', '{}', true);
    expect(ledger.onlyYields()).toBe(false);
    expect(ledger.onlyParkable()).toBe(false);
    ledger.markPlatform(platform);
    expect(ledger.onlyParkable()).toBe(true);
    ledger.close(yielded);
    expect(ledger.onlyParkable()).toBe(true);
    expect(ledger.takeQueued()?.[0]).toBe(queued);
    expect(ledger.onlyParkable()).toBe(false);
  });
});

describe('BridgeLedger call numbers (SPEC §16 callKey)', () => {
  it('numbers tool calls of every kind together from 1, and nothing else', () => {
    const ledger = new BridgeLedger();
    const first = ledger.add('callValue', '{}', false);
    const search = ledger.add('search', '["q"]', false);
    const mcp = ledger.add('namespace', '{}', true);
    const timer = ledger.add('sleep', '[1]', true);
    const second = ledger.add('callValue', '{}', true);
    expect([first, mcp, second].map((id) => ledger.callNumber(id))).toEqual([1, 2, 3]);
    expect(ledger.callNumber(search)).toBeUndefined();
    expect(ledger.callNumber(timer)).toBeUndefined();
  });

  it('goes on counting from a parked run’s state', () => {
    const parked = new BridgeLedger();
    parked.add('callValue', '{}', false);
    const open = parked.add('namespace', '{}', false);
    const restored = new BridgeLedger();
    restored.load(JSON.parse(JSON.stringify(parked.state())) as ReturnType<BridgeLedger['state']>);
    expect(restored.callNumber(open)).toBe(2);
    expect(restored.callNumber(restored.add('callValue', '{}', false))).toBe(3);
  });
});

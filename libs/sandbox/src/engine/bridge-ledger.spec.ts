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

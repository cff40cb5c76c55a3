import { InFlightLimit } from './in-flight-limit';

describe('InFlightLimit', () => {
  it('refuses past the per-key bound without touching other keys, and frees a slot once per release', () => {
    const limit = new InFlightLimit({ perKey: 2, total: 10 });
    const a1 = limit.acquire('a');
    const a2 = limit.acquire('a');
    expect(a1).not.toBeNull();
    expect(a2).not.toBeNull();
    expect(limit.acquire('a')).toBeNull();
    expect(limit.acquire('b')).not.toBeNull();
    a1!();
    a1!();
    expect(limit.inFlight).toBe(2);
    expect(limit.acquire('a')).not.toBeNull();
    expect(limit.acquire('a')).toBeNull();
  });

  it('refuses every key past the total bound', () => {
    const limit = new InFlightLimit({ perKey: 5, total: 3 });
    const held = ['a', 'b', 'c'].map((key) => limit.acquire(key));
    expect(limit.acquire('d')).toBeNull();
    held[1]!();
    expect(limit.acquire('d')).not.toBeNull();
    expect(limit.inFlight).toBe(3);
  });
});

describe('InFlightLimit with a per-key override and no total', () => {
  it('bounds each key by the share given at acquire, and counts what a key holds', () => {
    const limit = new InFlightLimit({ perKey: 1 });
    expect(limit.acquire('bob', 2)).not.toBeNull();
    const second = limit.acquire('bob', 2);
    expect(second).not.toBeNull();
    expect(limit.acquire('bob', 2)).toBeNull();
    expect(limit.acquire('alice')).not.toBeNull();
    expect(limit.acquire('alice')).toBeNull();
    expect(limit.held('bob')).toBe(2);
    second!();
    expect(limit.held('bob')).toBe(1);
    expect(limit.held('carol')).toBe(0);
  });
});

import { parkingTerm, pastExpiry } from './parking-term';

describe('parkingTerm: the one term of a parked run and its copies', () => {
  it('parks now and expires snapshotTtlSeconds later', () => {
    expect(parkingTerm(300, 1_000)).toEqual({ parkedAt: 1_000, expiresAt: 301_000 });
  });
});

describe('pastExpiry', () => {
  it('a recorded expiry at or before now has passed; none never does', () => {
    expect(pastExpiry('2030-01-01T00:00:00.000Z', Date.parse('2030-01-01T00:00:00.000Z'))).toBe(true);
    expect(pastExpiry('2030-01-01T00:00:00.001Z', Date.parse('2030-01-01T00:00:00.000Z'))).toBe(false);
    expect(pastExpiry(null, Date.now())).toBe(false);
  });

  it('reads an expiry in epoch ms alike (the holder keeps it so)', () => {
    expect([pastExpiry(5_000, 5_000), pastExpiry(5_001, 5_000)]).toEqual([true, false]);
  });
});

import { parkingTerm, pastExpiry, termHalfSpent } from './parking-term';

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

describe('termHalfSpent', () => {
  const parkedAt = '2026-12-05T00:00:00.000Z';
  const expiresAt = '2026-12-05T00:15:00.000Z';
  it('is false in the first half of the term and true from its middle on', () => {
    expect(termHalfSpent(parkedAt, expiresAt, Date.parse('2026-12-05T00:07:29.999Z'))).toBe(false);
    expect(termHalfSpent(parkedAt, expiresAt, Date.parse('2026-12-05T00:07:30.000Z'))).toBe(true);
    expect(termHalfSpent(parkedAt, expiresAt, Date.parse('2026-12-05T00:20:00.000Z'))).toBe(true);
  });
  it('is true for a term it cannot read', () => {
    expect(termHalfSpent(null, expiresAt)).toBe(true);
    expect(termHalfSpent(parkedAt, null)).toBe(true);
    expect(termHalfSpent('not a time', expiresAt)).toBe(true);
  });
});

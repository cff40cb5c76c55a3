import type { PendingCellEntry } from '@codemode/events';
import { deliveredTooOften, otherConsumers, reclaimable } from './cell-reclaim';

const entry = (id: string, consumer: string, deliveries = 1): PendingCellEntry => ({
  lane: 'first',
  id,
  consumer,
  idleMs: 60_000,
  deliveries,
});

describe('cell reclaim', () => {
  const pending = [entry('1-0', 'dead'), entry('2-0', 'live'), entry('3-0', 'me'), entry('4-0', 'dead', 2)];

  it('looks at the lease of every other consumer once', () => {
    expect(otherConsumers(pending, 'me')).toEqual(['dead', 'live']);
  });

  it('reclaims only the entries of consumers whose lease lapsed, never its own', () => {
    expect(reclaimable(pending, 'me', new Set(['live'])).map((e) => e.id)).toEqual(['1-0', '4-0']);
    expect(reclaimable(pending, 'me', new Set(['live', 'dead']))).toEqual([]);
  });

  it('drops an entry past its third delivery', () => {
    expect([1, 2, 3, 4].map(deliveredTooOften)).toEqual([false, false, false, true]);
  });
});

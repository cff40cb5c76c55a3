import type { PendingCellEntry } from '@codemode/events';
import { deliveredTooOften, otherConsumers, reclaimable, unseenOwn } from './cell-reclaim';

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

  it('takes back its own entries only where it holds none (a read whose reply was lost), never another consumer’s', () => {
    const mine = [...pending, entry('5-0', 'me')];
    expect(unseenOwn(mine, 'me', (id) => id === '3-0').map((e) => e.id)).toEqual(['5-0']);
    expect(unseenOwn(mine, 'me', () => true)).toEqual([]);
    expect(unseenOwn(mine, 'live', () => false).map((e) => e.id)).toEqual(['2-0']);
  });

  it('drops an entry past its third delivery', () => {
    expect([1, 2, 3, 4].map(deliveredTooOften)).toEqual([false, false, false, true]);
  });
});

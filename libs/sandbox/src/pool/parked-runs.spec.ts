import { TOO_MANY_SUSPENDED_MESSAGE, type CellOutcome } from '@codemode/cells';
import { ParkedRuns } from './parked-runs';
import type { PoolThread } from './pool-thread';

const MiB = 1024 * 1024;

/** A thread as ParkedRuns uses it: it only ever discards a run's VM there. */
function thread(): PoolThread & { discarded: string[] } {
  const discarded: string[] = [];
  return { discarded, discard: (runId: string) => discarded.push(runId) > 0 } as unknown as PoolThread & { discarded: string[] };
}

function waiting(mib = 16): CellOutcome {
  return {
    status: 'waiting',
    reason: 'yield',
    pending: [],
    snapshotBytes: 4096,
    memoryBytes: mib * MiB,
    output: [],
    consoleTruncated: false,
    bridgeDispatchStarted: false,
  };
}

const completed: CellOutcome = { status: 'completed', valueJson: '1', output: [], consoleTruncated: false, bridgeDispatchStarted: false };

describe('ParkedRuns', () => {
  it('parks a waiting outcome in its thread; any other outcome parks nothing', () => {
    const parked = new ParkedRuns({ maxParked: 4 }, () => undefined);
    const t = thread();
    expect(parked.admit('r1', t, 'acme', waiting(16))).toEqual(waiting(16));
    expect(parked.admit('r2', t, 'acme', completed)).toBe(completed);
    expect(parked.threadOf('r1')).toBe(t);
    expect(parked.has('r2')).toBe(false);
    expect(parked.size).toBe(1);
    expect(parked.memoryBytes).toBe(16 * MiB);
    expect(parked.tenantOf('r1')).toBe('acme');
  });

  it('past the slots with nothing that may leave, fails the park with the exact message and frees its VM', () => {
    const warnings: string[] = [];
    const parked = new ParkedRuns({ maxParked: 1 }, (_level, msg) => warnings.push(msg));
    const t = thread();
    parked.admit('r1', t, 'acme', waiting());
    const refused = parked.admit('r2', t, 'acme', waiting());
    expect(refused).toMatchObject({ status: 'failed', code: 'invalid_input', phase: 'host', error: TOO_MANY_SUSPENDED_MESSAGE });
    expect(t.discarded).toEqual(['r2']);
    expect(parked.has('r2')).toBe(false);
    expect(warnings).toEqual(['too many suspended code mode runs; failing the run']);
  });

  it('with an eviction, the coldest run that may leave makes room, and its owner is told', () => {
    const parked = new ParkedRuns({ maxParked: 2 }, () => undefined);
    const evicted: string[] = [];
    parked.evictWith({ evictable: (runId) => runId !== 'r1', evicted: (runId) => evicted.push(runId) });
    const t = thread();
    parked.admit('r1', t, 'acme', waiting());
    parked.admit('r2', t, 'acme', waiting());
    expect(parked.admit('r3', t, 'zeta', waiting())).toEqual(waiting());
    expect(evicted).toEqual(['r2']);
    expect(t.discarded).toEqual(['r2']);
    expect([parked.has('r1'), parked.has('r2'), parked.has('r3')]).toEqual([true, false, true]);
  });

  it('a run taken for a resume keeps its slot and may not leave; parking again keeps its tenant', () => {
    const parked = new ParkedRuns({ maxParked: 1 }, () => undefined);
    parked.evictWith({ evictable: () => true, evicted: () => undefined });
    const t = thread();
    parked.admit('r1', t, 'acme', waiting());
    expect(parked.takeForResume('r1')).toBe(t);
    expect(parked.has('r1')).toBe(false);
    expect(parked.admit('r2', t, 'zeta', waiting())).toMatchObject({ status: 'failed', error: TOO_MANY_SUSPENDED_MESSAGE });
    expect(parked.admit('r1', t, undefined, waiting(32))).toEqual(waiting(32));
    expect(parked.tenantOf('r1')).toBe('acme');
    expect(parked.memoryBytes).toBe(32 * MiB);
  });

  it('past the memory budget, keepWithinBudget evicts what may leave by then', () => {
    const parked = new ParkedRuns({ maxParked: 8, maxParkedMemoryBytes: 40 * MiB }, () => undefined);
    let mayLeave = false;
    const evicted: string[] = [];
    parked.evictWith({ evictable: () => mayLeave, evicted: (runId) => evicted.push(runId) });
    const t = thread();
    parked.admit('r1', t, 'acme', waiting(32));
    parked.admit('r2', t, 'acme', waiting(32));
    expect(parked.size).toBe(2);
    mayLeave = true;
    parked.keepWithinBudget();
    expect(evicted).toEqual(['r1']);
    expect(parked.memoryBytes).toBe(32 * MiB);
  });

  it('a run that ended in another thread than the one holding it parked is left alone; a discard frees its slot', () => {
    const parked = new ParkedRuns({ maxParked: 4 }, () => undefined);
    const t = thread();
    parked.admit('r1', t, 'acme', waiting());
    parked.ended('r1', thread());
    expect(parked.has('r1')).toBe(true);
    parked.ended('r1', t);
    expect(parked.has('r1')).toBe(false);
    expect(parked.memoryBytes).toBe(0);
    parked.admit('r2', t, 'acme', waiting());
    parked.discard('r2');
    expect(parked.size).toBe(0);
    expect(parked.memoryBytes).toBe(0);
  });
});

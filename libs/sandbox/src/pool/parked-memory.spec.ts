import { ParkedMemory, type ParkedMemoryLimits } from './parked-memory';

const MiB = 1024 * 1024;
const LIMITS: ParkedMemoryLimits = { slots: 8, bytes: 1024 * MiB, tenantSlots: 4 };
const anyMayLeave = (): boolean => true;

function memoryWith(...vms: [runId: string, tenant: string, mib: number][]): ParkedMemory {
  const memory = new ParkedMemory();
  for (const [runId, tenant, mib] of vms) memory.keep({ runId, tenant, bytes: mib * MiB });
  return memory;
}

describe('ParkedMemory: which parked VMs leave memory (SPEC §10 "Parked memory")', () => {
  it('counts the wasm memory of every kept VM; parking again replaces the size and makes it the hottest', () => {
    const memory = memoryWith(['a1', 'a', 16], ['b1', 'b', 32]);
    expect(memory.bytes).toBe(48 * MiB);
    memory.keep({ runId: 'a1', tenant: 'a', bytes: 64 * MiB });
    expect(memory.bytes).toBe(96 * MiB);
    // a1 is now the hottest, but a holds the most bytes: its VM goes before b's colder one.
    expect(memory.overBudget({ ...LIMITS, bytes: 50 * MiB }, anyMayLeave)).toEqual(['a1']);
    memory.forget('a1');
    memory.forget('a1');
    expect(memory.bytes).toBe(32 * MiB);
    expect(memory.size).toBe(1);
  });

  it('a tenant at its share of the slots evicts its own coldest, never another tenant’s', () => {
    const memory = memoryWith(['b1', 'b', 16], ['a1', 'a', 16], ['a2', 'a', 16], ['a3', 'a', 16], ['a4', 'a', 16]);
    expect(memory.plan({ runId: 'a5', tenant: 'a', bytes: 16 * MiB }, LIMITS, anyMayLeave)).toEqual({ evict: ['a1'] });
    // a1 may not leave (a call in progress): the next of a's own goes instead.
    expect(memory.plan({ runId: 'a5', tenant: 'a', bytes: 16 * MiB }, LIMITS, (id) => id !== 'a1')).toEqual({ evict: ['a2'] });
  });

  it('a tenant at its share whose own runs may not leave is refused, even with other tenants’ runs that could', () => {
    const memory = memoryWith(['b1', 'b', 16], ['a1', 'a', 16], ['a2', 'a', 16], ['a3', 'a', 16], ['a4', 'a', 16]);
    const onlyB = (id: string): boolean => id.startsWith('b');
    expect(memory.plan({ runId: 'a5', tenant: 'a', bytes: 16 * MiB }, LIMITS, onlyB)).toEqual({ refused: 'tenant_slots' });
    // The other tenant still parks: it is below its share and the slots are not full.
    expect(memory.plan({ runId: 'b2', tenant: 'b', bytes: 16 * MiB }, LIMITS, () => false)).toEqual({ evict: [] });
  });

  it('a run being resumed keeps its slot: parking it again is never refused for slots', () => {
    const memory = memoryWith(['a1', 'a', 16], ['a2', 'a', 16], ['a3', 'a', 16], ['a4', 'a', 16]);
    expect(memory.plan({ runId: 'a2', tenant: 'a', bytes: 20 * MiB }, LIMITS, () => false)).toEqual({ evict: [] });
  });

  it('past the pool’s slots, the coldest of the tenant holding the most slots leaves; with none that may leave, refused', () => {
    const limits = { ...LIMITS, slots: 4, tenantSlots: 4 };
    const memory = memoryWith(['b1', 'b', 16], ['a1', 'a', 16], ['a2', 'a', 16], ['c1', 'c', 16]);
    expect(memory.plan({ runId: 'c2', tenant: 'c', bytes: 16 * MiB }, limits, anyMayLeave)).toEqual({ evict: ['a1'] });
    // Ties (b and c hold one each after a's went) go to the colder run.
    expect(memory.plan({ runId: 'd1', tenant: 'd', bytes: 16 * MiB }, limits, (id) => id !== 'a1' && id !== 'a2')).toEqual({
      evict: ['b1'],
    });
    expect(memory.plan({ runId: 'd1', tenant: 'd', bytes: 16 * MiB }, limits, () => false)).toEqual({ refused: 'slots' });
  });

  it('past the memory budget, the tenant holding the most bytes loses its coldest VMs first, until the new one fits', () => {
    const limits = { ...LIMITS, bytes: 256 * MiB };
    // b (the victim) parked first, with small VMs; a holds big ones.
    const memory = memoryWith(['b1', 'b', 16], ['b2', 'b', 16], ['a1', 'a', 96], ['a2', 'a', 96]);
    expect(memory.plan({ runId: 'a3', tenant: 'a', bytes: 96 * MiB }, limits, anyMayLeave)).toEqual({ evict: ['a1'] });
    expect(memory.plan({ runId: 'a3', tenant: 'a', bytes: 180 * MiB }, limits, anyMayLeave)).toEqual({ evict: ['a1', 'a2'] });
    // A small park of b's past the budget also pushes a's out, not b's own colder runs.
    expect(memory.plan({ runId: 'b3', tenant: 'b', bytes: 48 * MiB }, limits, anyMayLeave)).toEqual({ evict: ['a1'] });
  });

  it('past the memory budget with nothing that may leave, the run still parks; overBudget evicts once some may', () => {
    const limits = { ...LIMITS, bytes: 64 * MiB };
    const memory = memoryWith(['a1', 'a', 48]);
    expect(memory.plan({ runId: 'a2', tenant: 'a', bytes: 48 * MiB }, limits, () => false)).toEqual({ evict: [] });
    memory.keep({ runId: 'a2', tenant: 'a', bytes: 48 * MiB });
    expect(memory.overBudget(limits, () => false)).toEqual([]);
    // a2's image is written now (a1 still has a call in progress): a2 leaves, the hottest, for want of another.
    expect(memory.overBudget(limits, (id) => id === 'a2')).toEqual(['a2']);
    expect(memory.overBudget(limits, anyMayLeave)).toEqual(['a1']);
  });

  it('never evicts the run that is parking', () => {
    const memory = memoryWith(['a1', 'a', 16]);
    const plan = memory.plan({ runId: 'a1', tenant: 'a', bytes: 2048 * MiB }, LIMITS, anyMayLeave);
    expect(plan).toEqual({ evict: [] });
  });
});

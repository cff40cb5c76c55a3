import { TOO_MANY_SUSPENDED_MESSAGE } from '@codemode/cells';
import type { BridgeHost } from '../engine/types';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, tick, valueOf, waiting } from './test-support';

const MiB = 1024 * 1024;
const TOOLS = testCatalog(['gated']);
const parkCode = 'await yield_control(); return 1';

/** SPEC §10 "Parked memory": the pool's memory budget, tenant shares and what may be evicted. */
describe('SandboxPool: parked memory', () => {
  let pool: SandboxPool;
  let share = 2;
  const evicted: string[] = [];
  const pinned = new Set<string>();
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 1, maxParked: 4, maxParkedMemoryBytes: 80 * MiB, maxParkedPerTenant: () => share });
    pool.evictWith({ evictable: (runId) => !pinned.has(runId), evicted: (runId) => evicted.push(runId) });
  });
  afterAll(async () => {
    await pool.close();
  });
  afterEach(() => {
    for (const runId of [...pinned, ...evicted]) pool.discard(runId);
    pinned.clear();
    evicted.length = 0;
    share = 2;
  });

  async function park(tenant: string, code = parkCode, host?: BridgeHost): Promise<string> {
    const request = { ...cell(code), catalogJson: TOOLS };
    waiting(await pool.run(request, host, tenant));
    return request.runId;
  }

  it('reports each parked VM’s wasm memory size, and their sum', async () => {
    const before = pool.stats().parkedMemoryBytes;
    const request = cell('const big = new Uint8Array(24 * 1024 * 1024); await yield_control(); return big.length');
    const parked = waiting(await pool.run(request, undefined, 'a'));
    expect(parked.memoryBytes).toBeGreaterThanOrEqual(24 * MiB);
    // What it holds, not its non-zero pages: far more than a compressed image would say.
    expect(parked.memoryBytes).toBeGreaterThan(parked.snapshotBytes);
    expect(pool.stats().parkedMemoryBytes).toBe(before + parked.memoryBytes);
    expect(valueOf(await pool.resume(request.runId, { timeoutMs: 1000 }))).toBe(String(24 * MiB));
    expect(pool.stats().parkedMemoryBytes).toBe(before);
  });

  it('a tenant at its half of the slots evicts its own coldest run; the other tenant keeps its VMs', async () => {
    const b1 = await park('b');
    const a1 = await park('a');
    const a2 = await park('a');
    const a3 = await park('a');
    expect(evicted).toEqual([a1]);
    expect(pool.holds(b1)).toBe(true);
    expect(pool.holds(a2) && pool.holds(a3)).toBe(true);
    pinned.add(b1).add(a2).add(a3);
  });

  it('a tenant at its half whose runs may not leave gets `too many suspended`; the other tenant still parks', async () => {
    const a1 = await park('a');
    const a2 = await park('a');
    pinned.add(a1).add(a2);
    expect(failure(await pool.run(cell(parkCode), undefined, 'a'))).toEqual({
      code: 'invalid_input',
      phase: 'host',
      error: TOO_MANY_SUSPENDED_MESSAGE,
    });
    const b1 = await park('b');
    pinned.add(b1);
    expect(evicted).toEqual([]);
  });

  it('past the memory budget the biggest holder’s coldest VMs leave, and keepWithinBudget catches up once one may', async () => {
    share = 4;
    const small = await park('b');
    // ~46 MiB of Memory each (a VM starts at ~6 MiB): two of them and the small one exceed 80 MiB, one and the small one do not.
    const big = 'const big = new Uint8Array(40 * 1024 * 1024); await yield_control(); return big.length';
    const big1 = await park('a', big);
    pinned.add(small);
    const big2 = await park('a', big);
    expect(evicted).toEqual([big1]);
    // big2 may not leave yet (its image is not written): the next big one parks past the budget…
    pinned.add(big2);
    const big3 = await park('a', big);
    expect(evicted).toEqual([big1]);
    expect(pool.stats().parkedMemoryBytes).toBeGreaterThan(80 * MiB);
    // …until its owner says it may: then it leaves, the small run of the other tenant stays.
    pinned.delete(big2);
    pool.keepWithinBudget();
    expect(evicted).toEqual([big1, big2]);
    expect(pool.stats().parkedMemoryBytes).toBeLessThanOrEqual(80 * MiB);
    expect(pool.holds(small) && pool.holds(big3)).toBe(true);
    pinned.add(big3);
  });

  it('a parked run whose only open call waits for an approval has no host work (it may leave memory)', async () => {
    let decide: ((value: unknown) => void) | undefined;
    const gated: BridgeHost = {
      dispatch: (_call, _signal, gate) => {
        gate?.hold();
        return new Promise((resolve) => (decide = resolve));
      },
    };
    const runId = await park('a', 'const p = gated({}); await yield_control(); return await p', gated);
    await tick(20);
    expect(decide).toBeDefined();
    expect(pool.hasHostWork(runId)).toBe(false);
    pinned.add(runId);
  });
});

import { SandboxPool } from './sandbox-pool';
import { cell, valueOf } from './test-support';

/**
 * SPEC §10 fairness, on a real pool: cells waiting for a thread are handed out round-robin across
 * tenants, and a thread is given a new cell only once it has begun the last one, so another
 * tenant's trivial cell waits for the cells already on the threads, not for a whole flood.
 */
describe('SandboxPool fairness across tenants', () => {
  let pool: SandboxPool;

  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 1 });
  });

  afterAll(async () => {
    await pool.close();
  });

  it('a tenant flooding CPU-busy cells delays another tenant’s trivial cell by at most the cells already on the thread', async () => {
    const finished: string[] = [];
    const busy = 'const t = Date.now(); while (Date.now() - t < 60) {} return "busy"';
    const flood = Array.from({ length: 8 }, (_, i) =>
      pool.run(cell(busy), undefined, 'flood').then((outcome) => {
        finished.push(`flood-${i}`);
        return outcome;
      }),
    );
    const victim = pool.run(cell('return 1 + 1'), undefined, 'victim').then((outcome) => {
      finished.push('victim');
      return outcome;
    });
    expect(valueOf(await victim)).toBe('2');
    // One flood cell was running and at most one more had been given to the thread.
    expect(finished.indexOf('victim')).toBeLessThanOrEqual(2);
    expect((await Promise.all(flood)).map(valueOf)).toEqual(Array(8).fill('"busy"'));
  });
});

/**
 * SPEC §10 "Sandbox threads": with a share of the threads per tenant, one tenant's cells that hold
 * their thread (a busy loop here; a native builtin that ignores the interrupt in the attack) take
 * at most its share: its next cell waits in the queue, and another tenant's cell starts at once.
 */
describe('SandboxPool thread share per tenant', () => {
  let pool: SandboxPool;

  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 2, maxGuestThreadsPerTenant: () => 1 });
  });

  afterAll(async () => {
    await pool.close();
  });

  it("a tenant holding its share waits; another tenant's cell runs on the other thread meanwhile", async () => {
    const finished: string[] = [];
    const busy = 'const t = Date.now(); while (Date.now() - t < 400) {} return "busy"';
    const started = performance.now();
    const flood = Array.from({ length: 2 }, (_, i) =>
      pool.run(cell(busy), undefined, 'flood').then((outcome) => {
        finished.push(`flood-${i}`);
        return { outcome, ms: performance.now() - started };
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const victim = await pool.run(cell('return 1 + 1'), undefined, 'victim');
    finished.push('victim');
    expect(valueOf(victim)).toBe('2');
    const [first, second] = await Promise.all(flood);
    expect(finished).toEqual(['victim', 'flood-0', 'flood-1']);
    expect([valueOf(first.outcome), valueOf(second.outcome)]).toEqual(['"busy"', '"busy"']);
    // The second flood cell began only once the first had ended: one after the other.
    expect(second.ms).toBeGreaterThanOrEqual(800);
  });

  it("a thread terminated for a tenant's overrun counts as that tenant's until its replacement is ready", async () => {
    const stuck = 'const s = "a".repeat(2e7); return s.indexOf("a".repeat(5000) + "b")';
    const culprit = await pool.run(cell(stuck, { timeoutMs: 300 }), undefined, 'flood');
    expect(culprit).toMatchObject({ status: 'failed', code: 'timeout' });
    // The flood's next cell waits for the replacement; the victim's, sent after it, takes the other thread now.
    const finished: string[] = [];
    const next = pool.run(cell('return 5'), undefined, 'flood').then((outcome) => {
      finished.push('flood');
      return { outcome, starting: pool.stats().starting };
    });
    const victim = await pool.run(cell('return 6'), undefined, 'victim');
    finished.push('victim');
    expect(valueOf(victim)).toBe('6');
    const { outcome, starting } = await next;
    expect({ finished, value: valueOf(outcome), starting }).toEqual({ finished: ['victim', 'flood'], value: '5', starting: 0 });
  });

  it('a tenant whose cells wait on the host does not hold its share: they run side by side', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const host = { dispatch: async () => gate.then(() => ({})) };
    const catalogJson = JSON.stringify({
      globals: [{ metadata: { callableName: 'noop', toolName: 'noop', description: 'waits', source: 'openclaw' }, replaySafe: true }],
      mcp: [],
    });
    const waiting = Array.from({ length: 3 }, (_, i) =>
      pool.run({ ...cell('await noop({}); return 7'), runId: `host-${i}`, catalogJson }, host, 'flood'),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    expect((await Promise.all(waiting)).map(valueOf)).toEqual(['7', '7', '7']);
  });
});

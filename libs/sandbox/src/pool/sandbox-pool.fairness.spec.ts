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

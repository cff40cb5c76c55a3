import { SharedConcurrency, sharedLimits } from './shared-concurrency';

describe('sharedLimits', () => {
  it('gives one consumer the whole budget', () => {
    expect(sharedLimits(16, [0])).toEqual([16]);
    expect(sharedLimits(16, [5])).toEqual([16]);
  });

  it('lets every shard use what the budget has left, and never less than one', () => {
    expect(sharedLimits(8, [0, 0, 0])).toEqual([8, 8, 8]);
    expect(sharedLimits(8, [5, 1, 0])).toEqual([7, 3, 2]);
    expect(sharedLimits(8, [6, 2, 0])).toEqual([6, 2, 1]);
    expect(sharedLimits(2, [3, 0])).toEqual([3, 1]);
  });
});

describe('SharedConcurrency', () => {
  it('lowers the other shards while jobs run and restores them as they finish', async () => {
    const shared = new SharedConcurrency(3, 2);
    const changes: [number, number][] = [];
    shared.onChange((index, limit) => changes.push([index, limit]));
    let release!: () => void;
    const running = shared.around(0, () => new Promise<void>((r) => (release = r)));
    expect([shared.limit(0), shared.limit(1)]).toEqual([3, 2]);
    expect(changes).toEqual([[1, 2]]);
    release();
    await running;
    expect([shared.limit(0), shared.limit(1)]).toEqual([3, 3]);
  });

  it('counts a job that throws as finished', async () => {
    const shared = new SharedConcurrency(1, 2);
    await expect(shared.around(1, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect([shared.limit(0), shared.limit(1)]).toEqual([1, 1]);
  });
});

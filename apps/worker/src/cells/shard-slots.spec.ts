import { ShardSlots } from './shard-slots';

describe('ShardSlots', () => {
  it('lets each shard take what it runs plus what the budget has left, at least one', () => {
    const slots = new ShardSlots(3, 2);
    expect([slots.free(0), slots.free(1)]).toEqual([3, 3]);
    slots.take(0);
    slots.take(0);
    expect([slots.free(0), slots.free(1)]).toEqual([1, 1]);
    slots.take(0);
    // At the budget an idle shard may still take one (the bounded overshoot of sharedLimits).
    expect([slots.free(0), slots.free(1)]).toEqual([0, 1]);
  });

  it('wakes a full shard once one of its slots is given back, with how many it may take', async () => {
    const slots = new ShardSlots(1, 1);
    slots.take(0);
    let woken: number | undefined;
    const waiting = slots.whenFree(0).then((free) => (woken = free));
    await Promise.resolve();
    expect(woken).toBeUndefined();
    slots.give(0);
    await waiting;
    expect(woken).toBe(1);
  });

  it('answers 0 to a waiting reader once closed', async () => {
    const slots = new ShardSlots(1, 1);
    slots.take(0);
    const waiting = slots.whenFree(0);
    slots.close();
    await expect(waiting).resolves.toBe(0);
    await expect(slots.whenFree(0)).resolves.toBe(0);
  });

  it("reads at most a shard's share of the budget at once, so idle shards cannot take the budget many times over", async () => {
    const even = new ShardSlots(16, 16);
    expect(even.free(0)).toBe(16);
    await expect(even.whenFree(0)).resolves.toBe(1);
    const larger = new ShardSlots(64, 16);
    await expect(larger.whenFree(3)).resolves.toBe(4);
    const small = new ShardSlots(2, 16);
    await expect(small.whenFree(0)).resolves.toBe(1);
  });
});

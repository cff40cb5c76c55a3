import { EventLoopSlices, sortInSlices } from './event-loop-slices';

describe('sortInSlices', () => {
  it('sorts like Array.prototype.sort, stable, for sizes around its runs', async () => {
    for (const size of [0, 1, 255, 256, 257, 1000, 5000]) {
      const items = Array.from({ length: size }, (_, index) => ({ key: (index * 7919) % 97, index }));
      const expected = [...items].sort((a, b) => a.key - b.key);
      await expect(sortInSlices(items, (a, b) => a.key - b.key, new EventLoopSlices())).resolves.toEqual(expected);
    }
  });

  it('lets timers run while it sorts 100 000 names', async () => {
    const names = Array.from({ length: 100_000 }, (_, index) => `name-${(index * 7919) % 100_003}`);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    try {
      await sortInSlices(names, (a, b) => (a < b ? -1 : a > b ? 1 : 0), new EventLoopSlices());
    } finally {
      clearInterval(timer);
    }
    expect(names.slice(0, 3)).toEqual(['name-0', 'name-1', 'name-10']);
    expect(ticks).toBeGreaterThan(0);
  });
});

describe('EventLoopSlices', () => {
  it('hands slices to concurrent callers in turn, so none waits for the others to finish', async () => {
    const slices = new EventLoopSlices();
    const order: string[] = [];
    const worker = async (name: string) => {
      for (let round = 0; round < 3; round += 1) {
        const until = performance.now() + 10;
        while (performance.now() < until);
        order.push(name);
        await slices.pause();
      }
    };
    await Promise.all([worker('a'), worker('b')]);
    expect(order.slice(0, 4)).toEqual(['a', 'b', 'a', 'b']);
  });
});

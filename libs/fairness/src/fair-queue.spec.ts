import { FairQueue } from './fair-queue';

describe('FairQueue', () => {
  it('serves tenants in turn, each tenant first come first served', () => {
    const queue = new FairQueue<string>();
    for (let i = 1; i <= 4; i += 1) queue.push('flood', `f${i}`);
    queue.push('victim', 'v1');
    queue.push('other', 'o1');
    queue.push('victim', 'v2');
    expect(queue.size).toBe(7);
    expect(queue.drain()).toEqual(['f1', 'v1', 'o1', 'f2', 'v2', 'f3', 'f4']);
    expect(queue.size).toBe(0);
    expect(queue.shift()).toBeUndefined();
  });

  it('passes over tenants that may not be served now, who keep their turn', () => {
    const queue = new FairQueue<string>();
    queue.push('flood', 'f1');
    queue.push('flood', 'f2');
    queue.push('victim', 'v1');
    queue.push('other', 'o1');
    expect(queue.shiftFirst((tenant) => tenant !== 'flood')).toBe('v1');
    expect(queue.shiftFirst(() => false)).toBeUndefined();
    expect(queue.size).toBe(3);
    // flood was passed over, not sent to the back: it is served first once it may be.
    expect(queue.shift()).toBe('f1');
    expect(queue.drain()).toEqual(['o1', 'f2']);
  });

  it('a tenant arriving late is served right after the tenant being served now', () => {
    const queue = new FairQueue<string>();
    for (let i = 1; i <= 3; i += 1) queue.push('flood', `f${i}`);
    expect(queue.shift()).toBe('f1');
    queue.push('victim', 'v1');
    expect(queue.shift()).toBe('f2');
    expect(queue.shift()).toBe('v1');
  });

  it('removes an item wherever it waits, and drops a tenant left with nothing', () => {
    const queue = new FairQueue<{ id: string }>();
    const a = { id: 'a' };
    const b = { id: 'b' };
    queue.push('t1', a);
    queue.push('t2', b);
    expect(queue.remove(a)).toBe(true);
    expect(queue.remove(a)).toBe(false);
    expect(queue.some((item) => item.id === 'b')).toBe(true);
    expect(queue.drain()).toEqual([b]);
  });
});

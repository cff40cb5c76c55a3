import { DerivedCatalogs } from './derived-catalogs';

const sized = (bytes: number): string => 'x'.repeat(bytes);

describe('DerivedCatalogs', () => {
  it('derives a key once, for every concurrent ask, and answers it from memory after', async () => {
    const cache = new DerivedCatalogs<string>((value) => value.length, 100, 1000);
    let derivations = 0;
    const derive = async (): Promise<string> => {
      derivations += 1;
      await new Promise((r) => setTimeout(r, 10));
      return 'description';
    };
    const answers = await Promise.all(Array.from({ length: 100 }, () => cache.get('bob', 's1|v1', derive)));
    expect(answers.every((answer) => answer === 'description')).toBe(true);
    expect(await cache.get('bob', 's1|v1', derive)).toBe('description');
    expect(derivations).toBe(1);
  });

  it('derives again for a new version: a new registration is seen at once', async () => {
    const cache = new DerivedCatalogs<string>((value) => value.length, 100, 1000);
    expect(await cache.get('bob', 's1|v1', () => Promise.resolve('old'))).toBe('old');
    expect(await cache.get('bob', 's1|v2', () => Promise.resolve('new'))).toBe('new');
  });

  it('keeps no failed derivation: the next ask derives again', async () => {
    const cache = new DerivedCatalogs<string>((value) => value.length, 100, 1000);
    await expect(cache.get('bob', 'k', () => Promise.reject(new Error('redis away')))).rejects.toThrow('redis away');
    expect(await cache.get('bob', 'k', () => Promise.resolve('back'))).toBe('back');
  });

  it("bounds a tenant's bytes by evicting its least recently used entries, and keeps no value over the bound", async () => {
    const cache = new DerivedCatalogs<string>((value) => value.length, 100, 1000);
    await cache.get('bob', 'a', () => Promise.resolve(sized(40)));
    await cache.get('bob', 'b', () => Promise.resolve(sized(40)));
    await cache.get('bob', 'a', () => Promise.resolve('never'));
    await cache.get('bob', 'c', () => Promise.resolve(sized(40)));
    expect(cache.held('bob')).toBe(80);
    // `b` was the least recently used: it went; `a` stayed.
    expect(await cache.get('bob', 'a', () => Promise.resolve('again'))).toBe(sized(40));
    expect(await cache.get('bob', 'b', () => Promise.resolve('again'))).toBe('again');
    await cache.get('bob', 'huge', () => Promise.resolve(sized(101)));
    expect(await cache.get('bob', 'huge', () => Promise.resolve('derived again'))).toBe('derived again');
  });

  it("over the total, evicts the largest tenant's entries, never a small tenant's", async () => {
    const cache = new DerivedCatalogs<string>((value) => value.length, 100, 120);
    await cache.get('alice', 'mine', () => Promise.resolve(sized(30)));
    for (const key of ['a', 'b', 'c', 'd', 'e']) await cache.get('bob', key, () => Promise.resolve(sized(50)));
    expect(cache.held()).toBeLessThanOrEqual(120);
    expect(cache.held('alice')).toBe(30);
    expect(await cache.get('alice', 'mine', () => Promise.resolve('evicted'))).toBe(sized(30));
  });
});

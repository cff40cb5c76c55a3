import { SessionSettingsCache } from './session-settings-cache';

const settings = (timeoutMs: number) => ({
  settings: { agentId: null, codeMode: { timeoutMs }, shell: {}, agents: false, notifyUrl: null, createdAt: 't', updatedAt: 't' },
  version: String(timeoutMs),
});

describe('SessionSettingsCache', () => {
  it('keeps each tenant’s sessions apart, even when names could run together', () => {
    const cache = new SessionSettingsCache();
    cache.set({ tenant: 'a', sessionId: 'b:c' }, settings(1));
    cache.set({ tenant: 'a:b', sessionId: 'c' }, settings(2));
    expect(cache.get({ tenant: 'a', sessionId: 'b:c' })).toEqual(settings(1));
    expect(cache.get({ tenant: 'a:b', sessionId: 'c' })).toEqual(settings(2));
    expect(cache.get({ tenant: 'other', sessionId: 'b:c' })).toBeUndefined();
  });

  it('holds at most its bound, dropping the least recently used first', () => {
    const cache = new SessionSettingsCache(2);
    cache.set({ tenant: 't', sessionId: 's1' }, settings(1));
    cache.set({ tenant: 't', sessionId: 's2' }, settings(2));
    expect(cache.get({ tenant: 't', sessionId: 's1' })).toEqual(settings(1));
    cache.set({ tenant: 't', sessionId: 's3' }, settings(3));
    expect(cache.size).toBe(2);
    expect(cache.get({ tenant: 't', sessionId: 's2' })).toBeUndefined();
    expect(cache.get({ tenant: 't', sessionId: 's1' })).toEqual(settings(1));
    cache.set({ tenant: 't', sessionId: 's1' }, settings(4));
    expect(cache.get({ tenant: 't', sessionId: 's1' })).toEqual(settings(4));
  });
});

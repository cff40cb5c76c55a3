import { InvalidEventError, StoreUnavailableError } from './errors';
import { retryWhileStoreUnavailable } from './store-retry';

describe('retryWhileStoreUnavailable', () => {
  it('tries again while Redis is unreachable, then answers what the write answered', async () => {
    const retries: number[] = [];
    let calls = 0;
    const value = await retryWhileStoreUnavailable(
      async (attempt) => {
        calls += 1;
        if (attempt < 3) throw new StoreUnavailableError(new Error('Connection is closed.'));
        return 'written';
      },
      { giveUpMs: 5000, onRetry: (attempt, delayMs) => retries.push(attempt * 1000 + delayMs) },
    );
    expect(value).toBe('written');
    expect(calls).toBe(3);
    expect(retries).toEqual([1100, 2200]);
  });

  it('throws any other error at once', async () => {
    let calls = 0;
    const failing = retryWhileStoreUnavailable(
      () => {
        calls += 1;
        return Promise.reject(new InvalidEventError('bad event'));
      },
      { giveUpMs: 5000 },
    );
    await expect(failing).rejects.toThrow('bad event');
    expect(calls).toBe(1);
  });

  it('gives up with the outage error once the next try would be past giveUpMs', async () => {
    let calls = 0;
    const failing = retryWhileStoreUnavailable(
      () => {
        calls += 1;
        return Promise.reject(new StoreUnavailableError(new Error('ECONNREFUSED')));
      },
      { giveUpMs: 250 },
    );
    await expect(failing).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(calls).toBe(2);
  });
});

import { TenantCallBound } from './tenant-call-bound';

/** A call that stays pending until `finish` is called. */
function pendingCall() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { call: () => done, finish: () => finish() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('TenantCallBound', () => {
  it('starts calls detached, at most max of one tenant at once, and never counts one tenant against another', async () => {
    const bound = new TenantCallBound(() => undefined);
    const calls = [pendingCall(), pendingCall()];

    expect(bound.start('bob', 2, calls[0].call)).toBe(true);
    expect(bound.start('bob', 2, calls[1].call)).toBe(true);
    expect(bound.start('bob', 2, () => Promise.resolve())).toBe(false);
    expect(bound.start('alice', 2, () => Promise.resolve())).toBe(true);
    expect(bound.count('bob')).toBe(2);

    calls[0].finish();
    await settle();

    expect(bound.count('bob')).toBe(1);
    expect(bound.start('bob', 2, calls[0].call)).toBe(true);
    expect(bound.count('alice')).toBe(0);
  });

  it('frees the place of a call that rejects, and reports the error', async () => {
    const errors: unknown[] = [];
    const bound = new TenantCallBound((error) => errors.push(error));

    expect(bound.start('bob', 1, () => Promise.reject(new Error('lost')))).toBe(true);
    await settle();

    expect(errors).toEqual([new Error('lost')]);
    expect(bound.count('bob')).toBe(0);
    expect(bound.start('bob', 1, () => Promise.resolve())).toBe(true);
  });

  it('drains: resolves once every call started so far has settled', async () => {
    const bound = new TenantCallBound(() => undefined);
    const call = pendingCall();
    bound.start('bob', 4, call.call);
    let drained = false;
    const draining = bound.drain().then(() => (drained = true));

    await settle();
    expect(drained).toBe(false);
    call.finish();
    await draining;

    expect(drained).toBe(true);
    expect(bound.count('bob')).toBe(0);
  });
});

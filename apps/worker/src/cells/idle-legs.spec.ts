import { IDLE_RELEASE_MS, IdleLegs } from './idle-legs';

/** A deferred promise: the work of a cell job, settled by the spec. */
function work() {
  let finish: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const promise = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { promise, finish, fail };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('IdleLegs (SPEC §10: a waiting cell gives its slot back)', () => {
  let now: number;
  let waiting: Set<string>;
  let cap: number;
  let legs: IdleLegs;

  beforeEach(() => {
    now = 0;
    waiting = new Set();
    cap = 2;
    legs = new IdleLegs({ waitsOnHost: (runId) => waiting.has(runId), tenantCap: () => cap, now: () => now });
  });

  it('releases a leg once it has waited only on the host for IDLE_RELEASE_MS, and counts it until its work settles', async () => {
    const job = work();
    const released = legs.untilIdle('r1', 'bob', job.promise);
    waiting.add('r1');
    legs.poll();
    now += IDLE_RELEASE_MS - 1;
    legs.poll();
    expect(legs.releasedBy('bob')).toBe(0);
    now += 1;
    legs.poll();
    expect(await released).toBe(true);
    expect(legs.releasedBy('bob')).toBe(1);
    job.finish();
    await settle();
    expect(legs.releasedBy('bob')).toBe(0);
  });

  it('starts counting again when the leg runs guest code between two waits', async () => {
    const job = work();
    const released = legs.untilIdle('r1', 'bob', job.promise);
    waiting.add('r1');
    legs.poll();
    now += IDLE_RELEASE_MS - 100;
    waiting.delete('r1');
    legs.poll();
    waiting.add('r1');
    now += 200;
    legs.poll();
    now += IDLE_RELEASE_MS - 1;
    legs.poll();
    expect(legs.releasedBy('bob')).toBe(0);
    job.finish();
    expect(await released).toBe(false);
  });

  it('answers false for work that ends first, whether it succeeds or fails', async () => {
    const ok = work();
    const failing = work();
    const first = legs.untilIdle('r1', 'bob', ok.promise);
    const second = legs.untilIdle('r2', 'bob', failing.promise);
    failing.promise.catch(() => undefined);
    ok.finish();
    failing.fail(new Error('boom'));
    expect(await first).toBe(false);
    expect(await second).toBe(false);
  });

  it("keeps a tenant's waiting legs past its cap on their slots, not another tenant's", async () => {
    const jobs = ['b1', 'b2', 'b3', 'a1'].map((runId) => ({ runId, job: work() }));
    const answers = jobs.map(({ runId, job }) => legs.untilIdle(runId, runId.startsWith('b') ? 'bob' : 'alice', job.promise));
    for (const { runId } of jobs) waiting.add(runId);
    legs.poll();
    now += IDLE_RELEASE_MS;
    legs.poll();
    expect(legs.releasedBy('bob')).toBe(2);
    expect(legs.releasedBy('alice')).toBe(1);
    expect(await answers[0]).toBe(true);
    expect(await answers[1]).toBe(true);
    expect(await answers[3]).toBe(true);
    // One of bob's released legs ends: his third takes its place.
    jobs[0].job.finish();
    await settle();
    legs.poll();
    expect(await answers[2]).toBe(true);
    expect(legs.releasedBy('bob')).toBe(2);
    for (const { job } of jobs) job.finish();
    await settle();
    expect(legs.releasedBy('bob')).toBe(0);
  });
});

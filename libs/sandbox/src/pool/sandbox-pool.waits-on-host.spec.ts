import type { BridgeHost } from '../engine/types';
import { SandboxPool } from './sandbox-pool';
import { cell, testCatalog, tick, valueOf } from './test-support';

/**
 * SPEC §10 fate isolation: the pool says when a run waits only on the host (a timer, a tool call),
 * so its worker can give its cell slot to runnable work; never while it executes guest code or
 * waits for a thread.
 */
describe('SandboxPool.waitsOnHost', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 1 });
  });
  afterAll(async () => {
    await pool.close();
  });

  const sleeping = 'await new Promise((resolve) => setTimeout(resolve, 600)); return 1';

  it('is true while a cell awaits a timer, false once it ended', async () => {
    const request = cell(sleeping);
    const outcome = pool.run(request);
    await tick(300);
    expect(pool.waitsOnHost(request.runId)).toBe(true);
    expect(valueOf(await outcome)).toBe('1');
    expect(pool.waitsOnHost(request.runId)).toBe(false);
  });

  it('is true while a cell awaits a tool call', async () => {
    let answer: (value: unknown) => void = () => undefined;
    const host: BridgeHost = { dispatch: () => new Promise((resolve) => (answer = resolve)) };
    const request = { ...cell('return await slow(1)'), catalogJson: testCatalog(['slow']) };
    const outcome = pool.run(request, host);
    await tick(300);
    expect(pool.waitsOnHost(request.runId)).toBe(true);
    answer(7);
    expect(valueOf(await outcome)).toBe('7');
  });

  it('is false while guest code executes, and for a cell queued behind it', async () => {
    const busy = cell('const end = Date.now() + 800; while (Date.now() < end) {} return 2', { timeoutMs: 5000 });
    const afterTimer = cell(
      'await new Promise((r) => setTimeout(r, 10)); const end = Date.now() + 800; while (Date.now() < end) {} return 3',
      {
        timeoutMs: 5000,
      },
    );
    const first = pool.run(busy);
    await tick(200);
    const second = pool.run(afterTimer);
    await tick(100);
    expect(pool.waitsOnHost(busy.runId)).toBe(false);
    expect(pool.waitsOnHost(afterTimer.runId)).toBe(false);
    expect(valueOf(await first)).toBe('2');
    await tick(200);
    // Past its timer it computes again: executing, not waiting.
    expect(pool.waitsOnHost(afterTimer.runId)).toBe(false);
    expect(valueOf(await second)).toBe('3');
  });

  it('is false for a parked run and for a run the pool does not hold', async () => {
    const request = cell('await yield_control(); return 4');
    expect((await pool.run(request)).status).toBe('waiting');
    expect(pool.waitsOnHost(request.runId)).toBe(false);
    pool.discard(request.runId);
    expect(pool.waitsOnHost('no-such-run')).toBe(false);
  });
});

import { RUN_UNAVAILABLE_MESSAGE, SNAPSHOT_LIMIT_MESSAGE, type CellOutcome, type ParkedImage } from '@codemode/cells';
import type { BridgeHost, RestorePlan } from '../engine/types';
import { RUN_LOST_PENDING_CALL_MESSAGE } from '../engine/parked-image';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, tick, valueOf, waiting } from './test-support';

/** `echo` resolves with its input; `client` is answered only by the platform. */
const host: BridgeHost = {
  dispatch: (call) => Promise.resolve((call.args as { input: unknown }).input),
  answeredByPlatform: (call) => (call.args as { tool?: unknown }).tool === 'client',
};
const TOOLS = testCatalog(['echo', 'client']);
const NO_PLAN: RestorePlan = { answers: [], redo: [], platform: [] };

function imageOf(outcome: CellOutcome): ParkedImage {
  const image = waiting(outcome).image;
  if (!image) throw new TypeError('the parked run has no image');
  return image;
}

/** SPEC §12: a parked run's image, restored by another pool (other threads, other VMs). */
describe('SandboxPool: parked run images', () => {
  let parker: SandboxPool;
  let taker: SandboxPool;
  beforeAll(async () => {
    [parker, taker] = await Promise.all([SandboxPool.start({ threads: 1 }), SandboxPool.start({ threads: 1 })]);
  });
  afterAll(async () => {
    await Promise.all([parker.close(), taker.close()]);
  });

  it('restores closure state in another pool, and the first VM is untouched', async () => {
    const request = {
      ...cell(
        'let n = 41; const rows = Array.from({ length: 500 }, (_, i) => ({ i })); await yield_control(); n += 1; return { n, rows: rows.length }',
      ),
      parkImage: true,
    };
    const parked = waiting(await parker.run(request));
    const image = imageOf(parked);
    expect(parked.snapshotBytes).toBe(image.bytes.length);
    expect(image).toMatchObject({ ...parker.imageBinding(), inFlight: [] });
    const restored = await taker.restore(request, image.bytes, NO_PLAN);
    expect(valueOf(restored)).toBe('{"n":42,"rows":500}');
    expect(valueOf(await parker.resume(request.runId, { timeoutMs: 1000 }))).toBe('{"n":42,"rows":500}');
  });

  it('keeps output and the console budget spent before the park', async () => {
    const request = { ...cell('text("a"); await yield_control(); text("b"); return 1', { maxOutputBytes: 1024 }), parkImage: true };
    const parked = waiting(await parker.run(request));
    expect(parked.output).toEqual([{ type: 'text', text: 'a' }]);
    const restored = await taker.restore(request, imageOf(parked).bytes, NO_PLAN);
    expect(restored.output).toEqual([{ type: 'text', text: 'b' }]);
    parker.discard(request.runId);
  });

  it('answers a pending platform call restored as waiting for the platform', async () => {
    const request = { ...cell('const r = await client({ q: 1 }); return { r }'), catalogJson: TOOLS, parkImage: true };
    const parked = waiting(await parker.run(request, host));
    const image = imageOf(parked);
    expect(image.inFlight).toEqual(['bridge:callValue:1']);
    parker.discard(request.runId);
    const second = waiting(await taker.restore(request, image.bytes, { ...NO_PLAN, platform: ['bridge:callValue:1'] }, host));
    expect(second.pending.map((call) => call.id)).toEqual(['bridge:callValue:1']);
    expect(taker.platformPending(request.runId)).toEqual(['bridge:callValue:1']);
    taker.settle(request.runId, 'bridge:callValue:1', { ok: true, value: 'answer' });
    expect(valueOf(await taker.resume(request.runId, { timeoutMs: 1000 }, host))).toBe('{"r":"answer"}');
  });

  it('applies an answer from the log and makes a replay-safe call again', async () => {
    const code = 'const [a, b] = await Promise.all([client(1), echo(2)]); return a + b';
    const request = { ...cell(code, { timeoutMs: 200 }), catalogJson: TOOLS, parkImage: true };
    const slowEcho: BridgeHost = { ...host, dispatch: (call) => tick(1000).then(() => (call.args as { input: unknown }).input) };
    const image = imageOf(await parker.run(request, slowEcho));
    expect(image.inFlight).toEqual(['bridge:callValue:1', 'bridge:callValue:2']);
    parker.discard(request.runId);
    const plan: RestorePlan = {
      answers: [{ id: 'bridge:callValue:1', ok: true, payload: '40' }],
      redo: ['bridge:callValue:2'],
      platform: [],
    };
    expect(valueOf(await taker.restore({ ...request, limits: { ...request.limits, timeoutMs: 1000 } }, image.bytes, plan, host))).toBe(
      '42',
    );
  });

  it('re-arms a timer for what is left until its due time', async () => {
    const request = {
      ...cell('const t = Date.now(); await new Promise((r) => setTimeout(r, 600)); return "woke"', { timeoutMs: 100 }),
      parkImage: true,
    };
    const image = imageOf(await parker.run(request));
    parker.discard(request.runId);
    const started = Date.now();
    const done = await taker.restore({ ...request, limits: { ...request.limits, timeoutMs: 2000 } }, image.bytes, NO_PLAN);
    expect(valueOf(done)).toBe('"woke"');
    expect(Date.now() - started).toBeLessThan(600);
  });

  it('restores a restartSafe (seeded) run with its recorded clock function', async () => {
    const request = {
      ...cell('const a = Math.random(); await yield_control(); return Date.now() > 0 && a < 1'),
      restartSafe: true,
      seed: [1, 2, 3, 4],
      parkImage: true,
    };
    const image = imageOf(await parker.run(request));
    parker.discard(request.runId);
    expect(valueOf(await taker.restore(request, image.bytes, NO_PLAN))).toBe('true');
  });

  it('fails a park whose compressed image is over maxSnapshotBytes', async () => {
    const request = {
      ...cell('const big = Array.from({ length: 20000 }, (_, i) => ({ i, s: "row" + i })); await yield_control(); return big.length', {
        maxSnapshotBytes: 4096,
      }),
      parkImage: true,
    };
    expect(failure(await parker.run(request))).toEqual({ code: 'snapshot_limit_exceeded', phase: 'guest', error: SNAPSHOT_LIMIT_MESSAGE });
  });

  it('refuses another run’s image and an image that is not this binary’s', async () => {
    const request = { ...cell('await yield_control(); return 1'), parkImage: true };
    const bytes = Buffer.from(imageOf(await parker.run(request)).bytes);
    parker.discard(request.runId);
    expect(failure(await taker.restore({ ...request, runId: 'another-run' }, bytes, NO_PLAN))).toMatchObject({
      error: RUN_UNAVAILABLE_MESSAGE,
    });
    bytes[4] = 99;
    expect(failure(await taker.restore(request, bytes, NO_PLAN))).toEqual({
      code: 'runtime_unavailable',
      phase: 'host',
      error: RUN_UNAVAILABLE_MESSAGE,
    });
  });

  it('evicts the coldest evictable parked run when the slots are full, instead of failing the new one', async () => {
    const small = await SandboxPool.start({ threads: 1, maxParked: 2 });
    try {
      const evicted: string[] = [];
      const pinned = new Set<string>();
      small.evictWith({ evictable: (runId) => !pinned.has(runId), evicted: (runId) => evicted.push(runId) });
      const park = async () => {
        const request = cell('await yield_control(); return 1');
        waiting(await small.run(request));
        return request.runId;
      };
      const first = await park();
      pinned.add(first);
      const second = await park();
      const third = await park();
      expect(evicted).toEqual([second]);
      expect(small.holds(second)).toBe(false);
      expect(small.parkedCount()).toBe(2);
      pinned.add(third);
      expect(failure(await small.run(cell('await yield_control(); return 1')))).toMatchObject({
        error: 'too many suspended code mode runs.',
      });
      expect(valueOf(await small.resume(first, { timeoutMs: 1000 }))).toBe('1');
    } finally {
      await small.close();
    }
  });

  it('knows which parked runs have a host call in progress (those must not be evicted)', async () => {
    let answer: ((value: unknown) => void) | undefined;
    const slow: BridgeHost = { dispatch: () => new Promise((resolve) => (answer = resolve)) };
    // Parks when its budget is spent with the call still open.
    const calling = { ...cell('await echo({ n: 1 }); return 1', { timeoutMs: 200 }), catalogJson: TOOLS };
    waiting(await parker.run(calling, slow));
    const idle = cell('await yield_control(); return 1');
    waiting(await parker.run(idle, host));
    expect(parker.hasHostWork(calling.runId)).toBe(true);
    expect(parker.hasHostWork(idle.runId)).toBe(false);
    answer?.({ n: 1 });
    await tick(20);
    expect(parker.hasHostWork(calling.runId)).toBe(false);
    parker.discard(calling.runId);
    parker.discard(idle.runId);
  });

  it('names the SPEC message for a lost pending call', () => {
    expect(RUN_LOST_PENDING_CALL_MESSAGE).toBe('code mode run lost a pending tool call when its worker stopped; start a new run.');
  });
});

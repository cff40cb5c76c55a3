import { runBuiltEngineProbe } from './built-engine-probe';

/**
 * The capture/restore surgery on real QuickJS (quickjs-emscripten-core 0.32.0). The emscripten
 * module is ESM, which jest's CommonJS sandbox refuses, so the probe runs the built engine
 * (`npm run build`) in a child Node process, like `wasm-loader.spec.ts`.
 */
const PROBE = String.raw`
const { WasmLoader, DEFAULT_MEMORY_BYTES } = require(ENGINE + '/wasm-loader.js');
const { CellVm } = require(ENGINE + '/cell-vm.js');
const { instantiateImage } = require(ENGINE + '/vm-image.js');
const SECRET = 'secret-of-cell-a-5c1d';
const has = (vm, text) => Buffer.from(vm.instance.memory.buffer).includes(Buffer.from(text));
function sink(log) {
  return {
    output(kind, text) { log.push('out:' + text); },
    request(method, args) { log.push('req:' + method + ':' + args); return 'bridge:' + method + ':1'; },
    cancel() {},
    clock: () => Date.now(),
  };
}
function run(vm, code, timeoutMs = 5000) {
  const log = [];
  vm.bind(sink(log), performance.now() + timeoutMs);
  const started = vm.start(code);
  if (!started.ok) return { started, log };
  vm.pump(2000);
  const state = vm.promiseState();
  const value = state === 'fulfilled' ? vm.readValue() : state === 'rejected' ? vm.readRejection() : undefined;
  return { state, value, log, timedOut: vm.timedOut };
}
  const out = {};
  const loader = await WasmLoader.load('release');
  const base = await CellVm.create(loader, DEFAULT_MEMORY_BYTES);
  const image = base.captureImage();
  base.release();
  out.imageSmall = image.vm.bytes.length < 4 * 1024 * 1024;
  out.imageHostFunctions = image.vm.hostRefIds.length;

  // 1. round trip: evaluates code, calls host functions (console → out, a tool call → request)
  const a = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  const r1 = run(a, 'console.log("hi", 1 + 1); void API.list("x"); globalThis.keep = ' + JSON.stringify(SECRET) + '.repeat(4); Array.prototype.polluted = 1; return keep.length');
  out.roundTrip = { state: r1.state, value: r1.value, log: r1.log };
  out.secretInA = has(a, SECRET);

  // 2. a second cell from the same image, while A is still alive: none of A's globals
  const b = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  out.ownMemory = b.instance.memory !== a.instance.memory;
  out.bSeesA = run(b, 'return [typeof keep, [].polluted === undefined, typeof Array.prototype.polluted, Math.random()]').value;
  out.secretInB = has(b, SECRET);
  out.releaseB = b.release() === undefined;
  out.releaseA = a.release() === undefined; // last in: the next instance takes A's Memory

  // 3. the next cell gets A's recycled Memory: nothing of A's heap is in it
  const c = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  out.cReusedMemory = c.instance.memory === a.instance.memory;
  out.secretInC = has(c, SECRET);
  out.cSeesA = run(c, 'return [typeof keep + "," + typeof Array.prototype.polluted, Math.random()]').value;
  out.randomDiffers = JSON.parse(out.cSeesA.json)[1] !== JSON.parse(out.bSeesA.json)[3];
  out.cSeesA = JSON.parse(out.cSeesA.json)[0];
  out.bSeesA = JSON.parse(out.bSeesA.json).slice(0, 3);
  out.releaseC = c.release() === undefined;

  // 4. per-cell limits after restore: the run's Memory cap, QuickJS's own limit below 16 MiB, the deadline
  const capped = await CellVm.fromBootImage(loader, image, 32 * 1024 * 1024);
  const bomb = run(capped, 'const keep = []; for (;;) keep.push(new Uint8Array(1024 * 1024).fill(1));');
  const grownTo = capped.instance.memory.buffer.byteLength;
  out.bomb = { state: bomb.state, error: bomb.value && bomb.value.message, stoppedAtCap: grownTo > 30 * 1024 * 1024 && grownTo <= 32 * 1024 * 1024 };
  capped.release();
  const small = await CellVm.fromBootImage(loader, image, 8 * 1024 * 1024);
  out.smallLimit = run(small, 'try { new ArrayBuffer(12 * 1024 * 1024); return "allocated"; } catch (e) { return String(e); }').value;
  out.smallMax = small.instance.memory.buffer.byteLength <= 16 * 1024 * 1024 && small.maxBytes === 16 * 1024 * 1024;
  small.release();
  const loop = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  const looped = run(loop, 'for (;;) {}', 100);
  out.deadline = looped.timedOut;
  loop.release();
  const wide = await CellVm.fromBootImage(loader, image, 128 * 1024 * 1024);
  out.wideMax = wide.instance.maxBytes === 128 * 1024 * 1024 && run(wide, 'return 3').value.json === '3';
  wide.release();

  // 5. another wasm binary (the debug build) refuses the image
  const debug = await WasmLoader.load('debug');
  try { await CellVm.fromBootImage(debug, image, DEFAULT_MEMORY_BYTES); out.otherBinary = 'restored'; }
  catch (e) { out.otherBinary = e.name + ': ' + e.message.replace(/[0-9a-f]{12}/g, 'H'); }
  try { await instantiateImage(loader, image.vm, DEFAULT_MEMORY_BYTES, () => []); out.wrongFunctions = 'restored'; }
  catch (e) { out.wrongFunctions = e.name; }

  // 6. a VM that ran a cell cannot become an image
  const used = await CellVm.create(loader, DEFAULT_MEMORY_BYTES);
  run(used, 'return 1');
  try { used.captureImage(); out.captureUsed = 'captured'; } catch (e) { out.captureUsed = 'refused'; }
  used.release();
  process.stdout.write(JSON.stringify(out));
`;

describe('VM images (built engine)', () => {
  it('restores a prepared VM into fresh instances that run cells in isolation under their own limits', () => {
    expect(runBuiltEngineProbe(PROBE, 60_000)).toEqual({
      imageSmall: true,
      imageHostFunctions: 3,
      roundTrip: { state: 'fulfilled', value: { ok: true, json: '84' }, log: ['out:hi 2', 'req:api:{"op":"list","prefix":"x"}'] },
      secretInA: true,
      ownMemory: true,
      bSeesA: ['undefined', true, 'undefined'],
      secretInB: false,
      randomDiffers: true,
      releaseA: true,
      releaseB: true,
      cReusedMemory: true,
      secretInC: false,
      cSeesA: 'undefined,undefined',
      releaseC: true,
      bomb: { state: 'rejected', error: 'out of memory', stoppedAtCap: true },
      smallLimit: { ok: true, json: '"InternalError: out of memory"' },
      smallMax: true,
      deadline: true,
      wideMax: true,
      otherBinary: 'VmImageError: cannot restore a VM image of wasm H into wasm H: not the same binary',
      wrongFunctions: 'VmImageError',
      captureUsed: 'refused',
    });
  });
});

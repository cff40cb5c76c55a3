import { runBuiltEngineProbe } from './built-engine-probe';

/**
 * The emscripten module is ESM loaded by dynamic import, which jest's CommonJS sandbox refuses, so
 * these checks run the built engine (`npm run build`) in a child Node process, like the threads do.
 */
const PROBE = String.raw`
const { WasmLoader, DEFAULT_MEMORY_BYTES, WASM_PAGE_BYTES } = require(ENGINE + '/wasm-loader.js');
const { CellVm } = require(ENGINE + '/cell-vm.js');
const SECRET = 'secret-of-the-previous-run-7f3a';
const has = (memory, text) => Buffer.from(memory.buffer).includes(Buffer.from(text));
const memoryOf = (vm) => vm.instance.memory;
  const out = {};
  const loader = await WasmLoader.load('release');

  // 0. a Memory starts at the binary's data + stack (~5.1 MiB), not the 16 MiB it declares, and
  // grows on demand up to its maximum
  const floorBytes = loader.floorPages * WASM_PAGE_BYTES;
  out.floorBelowDeclared = floorBytes > 5 * 1024 * 1024 && floorBytes < 6 * 1024 * 1024;

  // 1. recycled → zero-filled before the next instance, same maximum; another cap never gets it
  const first = await loader.instantiate(DEFAULT_MEMORY_BYTES);
  out.startsAtFloor = first.memory.buffer.byteLength === floorBytes;
  new Uint8Array(first.memory.buffer).fill(0xab, floorBytes - 4096, floorBytes);
  loader.recycle(first);
  const second = await loader.instantiate(DEFAULT_MEMORY_BYTES);
  out.reused = second.memory === first.memory;
  out.sameMax = second.maxBytes === first.maxBytes;
  out.tailZero = new Uint8Array(second.memory.buffer, floorBytes - 4096).every((b) => b === 0);
  loader.recycle(second);
  out.otherCapFresh = (await loader.instantiate(32 * 1024 * 1024)).memory !== second.memory;

  // 1b. an instance for an image to be written into: the whole recycled instance, its Memory
  // zero-filled and its routes to the host cleared. The stack pointer's reader answers the stack's
  // top between calls and less inside one.
  const roomy = loader.floorPages + 32;
  const forImage = await loader.instanceForImage(DEFAULT_MEMORY_BYTES, roomy);
  const context = forImage.module.newRuntime().newContext();
  let inCall;
  const probe = context.newFunction('probe', () => { inCall = forImage.stackPointer(); });
  context.setProp(context.global, 'probe', probe);
  context.unwrapResult(context.evalCode('probe()')).dispose();
  out.pointerBelowTopInCall = inCall < loader.stackTop;
  out.pointerAtTopBetweenCalls = forImage.stackPointer() === loader.stackTop;
  out.stillAtItsPages = forImage.memory.buffer.byteLength === roomy * WASM_PAGE_BYTES;
  const routes = forImage.module.callbacks;
  out.routesWhileUsed = routes.runtimeCallbacks.size + routes.contextCallbacks.size > 0;
  loader.recycle(forImage);
  out.routesClearedAtRecycle = routes.runtimeCallbacks.size + routes.contextCallbacks.size === 0;
  const again = await loader.instanceForImage(DEFAULT_MEMORY_BYTES, roomy);
  out.instanceReused = again === forImage;
  out.zeroFilled = new Uint8Array(again.memory.buffer).every((b) => b === 0);
  // a VM built from scratch needs the binary's data segments: a new instance, on the recycled Memory
  loader.recycle(again);
  const scratch = await loader.instantiate(DEFAULT_MEMORY_BYTES, roomy);
  out.scratchOnNewInstance = scratch !== again && scratch.memory === again.memory;
  // an instance whose stack pointer is not back at the top is not reused; its Memory is. A trap in
  // a call whose wrapper put its string argument on the wasm stack leaves the pointer below the top.
  try { scratch.module.ffi.QTS_Eval(0x7ffffff0, 0x7ffffff0, 8, 'codemode:drift.js', 0, 0); } catch { out.trapped = true; }
  out.drifted = scratch.stackPointer() < loader.stackTop;
  loader.recycle(scratch);
  const afterDrift = await loader.instanceForImage(DEFAULT_MEMORY_BYTES, roomy);
  out.driftedNotReused = afterDrift !== scratch && afterDrift.memory === scratch.memory;
  loader.recycle(afterDrift);
  await loader.instanceForImage(DEFAULT_MEMORY_BYTES, roomy);

  // at most 4 instances are kept in all, whatever their caps (a loader of its own, the bare
  // instance it keeps at load taken first)
  const own = await WasmLoader.load('release');
  await own.instanceForImage(DEFAULT_MEMORY_BYTES, own.floorPages);
  const caps = [1, 2, 3, 4, 5].map((n) => (16 + n) * 1024 * 1024);
  const made = [];
  for (const cap of caps) made.push(await own.instanceForImage(cap, roomy));
  for (const instance of made) own.recycle(instance);
  let kept = 0;
  for (const [i, cap] of caps.entries()) if ((await own.instanceForImage(cap, roomy)) === made[i]) kept += 1;
  out.keptInAll = kept;

  // 2. a Memory that grew is dropped
  const grown = await loader.instantiate(DEFAULT_MEMORY_BYTES);
  grown.module.newRuntime().newContext().evalCode('globalThis.big = new Uint8Array(20 * 1024 * 1024).fill(1); 1');
  out.grew = grown.memory.buffer.byteLength > 20 * 1024 * 1024 && grown.memory.buffer.byteLength <= DEFAULT_MEMORY_BYTES;
  loader.recycle(grown);
  out.grownDropped = (await loader.instantiate(DEFAULT_MEMORY_BYTES)).memory !== grown.memory;

  // 3. a released VM: unusable, and the next VM on its Memory sees nothing of its run. Both start
  // from the prepared image (a VM built from scratch grows its Memory while the prelude installs:
  // never recycled).
  const base = await CellVm.create(loader, DEFAULT_MEMORY_BYTES);
  const image = base.captureImage();
  base.release();
  const vm = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  vm.bind({ output() {}, request() { return 'id'; }, cancel() {} }, performance.now() + 5000);
  out.started = vm.start('globalThis.keep = ' + JSON.stringify(SECRET) + '.repeat(3); return keep.length').ok;
  vm.pump(2000);
  const memory = memoryOf(vm);
  out.secretBefore = has(memory, SECRET);
  out.releaseError = vm.release() === undefined ? null : 'failed';
  try { vm.snapshotBytes(); out.snapshotAfterRelease = 'allowed'; } catch { out.snapshotAfterRelease = 'refused'; }
  try { vm.promiseState(); out.callAfterRelease = 'allowed'; } catch { out.callAfterRelease = 'refused'; }
  const next = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  out.nextReused = memoryOf(next) === memory;
  out.secretAfter = has(memoryOf(next), SECRET);
  next.release();
  process.stdout.write(JSON.stringify(out));
`;

describe('WasmLoader memory recycling (built engine)', () => {
  it('starts a Memory at the binary floor, reuses only clean, ungrown instances, zero-filled, their stack pointer at the top, and never leaks a run into the next', () => {
    expect(runBuiltEngineProbe(PROBE, 30_000)).toEqual({
      floorBelowDeclared: true,
      startsAtFloor: true,
      reused: true,
      sameMax: true,
      tailZero: true,
      otherCapFresh: true,
      pointerBelowTopInCall: true,
      pointerAtTopBetweenCalls: true,
      stillAtItsPages: true,
      instanceReused: true,
      routesWhileUsed: true,
      routesClearedAtRecycle: true,
      zeroFilled: true,
      scratchOnNewInstance: true,
      trapped: true,
      drifted: true,
      driftedNotReused: true,
      keptInAll: 4,
      grew: true,
      grownDropped: true,
      started: true,
      secretBefore: true,
      releaseError: null,
      snapshotAfterRelease: 'refused',
      callAfterRelease: 'refused',
      nextReused: true,
      secretAfter: false,
    });
  });
});

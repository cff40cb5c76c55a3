import { runBuiltEngineProbe, secretLeavingCell } from './built-engine-probe';

/** Probe lines that load the built engine and capture its boot image: `loader`, `image`, and `out` for the findings. */
const WITH_BOOT_IMAGE = String.raw`
const { WasmLoader, DEFAULT_MEMORY_BYTES } = require(ENGINE + '/wasm-loader.js');
const { CellVm } = require(ENGINE + '/cell-vm.js');
const out = {};
const loader = await WasmLoader.load('release');
const base = await CellVm.create(loader, DEFAULT_MEMORY_BYTES);
const image = base.captureImage();
base.release();
`;

/**
 * A run restored from the image onto a recycled Memory must start from exactly what a new Memory +
 * the image give (no byte of the previous run). Runs the built engine in a child Node process, like
 * `wasm-loader.spec.ts` (the emscripten module is ESM, which jest's CommonJS sandbox refuses).
 */
const PROBE = String.raw`
${WITH_BOOT_IMAGE}
const SECRET = 'tenant-a-secret-9c41e7';
const CELL = ${JSON.stringify(secretLeavingCell('tenant-a-secret-9c41e7'))};
const HOST = { output() {}, request() { return 'id'; }, cancel() {} };
const memoryOf = (vm) => vm.instance.memory;
const bytesOf = (vm) => Buffer.from(memoryOf(vm).buffer);

  // The previous run: its secret in a big string, in ArrayBuffers (one kept, one freed again: the
  // heap may shrink back), and deep on the wasm stack; all of it within the Memory's initial pages
  // (the image's, ~6 MiB), as a Memory that grew is never recycled (wasm-loader.spec.ts).
  const victim = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  victim.bind(HOST, performance.now() + 5000);
  out.started = victim.start(CELL).ok;
  victim.pump(2000);
  out.value = victim.readValue();
  const dirty = memoryOf(victim);
  out.secretInVictim = bytesOf(victim).includes(SECRET);
  out.grew = memoryOf(victim).buffer.byteLength > image.vm.memoryPages * 65536;
  out.released = victim.release() === undefined;

  // The next run on the same Memory, scanned before any guest code runs.
  const next = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  out.recycled = memoryOf(next) === dirty;
  out.instanceReused = next.instance === victim.instance;
  out.secretInNext = bytesOf(next).includes(SECRET);

  // What a never-used Memory + the image give (another cap: no recycled Memory has it).
  const fresh = await CellVm.fromBootImage(loader, image, 2 * DEFAULT_MEMORY_BYTES);
  out.freshIsNew = memoryOf(fresh) !== dirty;
  // Only Math.random's 8-byte state differs: every restore seeds it anew.
  const seed = image.vm.contextPointer + image.vm.randomStateOffset;
  const differingBytes = (a, b) => {
    let count = 0;
    for (let page = 0; page < a.length; page += 4096) {
      if (a.compare(b, page, page + 4096, page, page + 4096) === 0) continue;
      for (let i = page; i < page + 4096; i += 1) if (a[i] !== b[i] && (i < seed || i >= seed + 8)) count += 1;
    }
    return count;
  };
  out.sameLength = bytesOf(next).length === bytesOf(fresh).length;
  out.differingBytes = differingBytes(bytesOf(next), bytesOf(fresh));

  // Again, with the next start after the loader's fill ran (the usual case: the fill waits until
  // the releasing task is done). The old run's Memory is all zeros before anything is built on it.
  const victim2 = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  victim2.bind(HOST, performance.now() + 5000);
  victim2.start(CELL);
  victim2.pump(2000);
  const dirty2 = memoryOf(victim2);
  out.secretInVictim2 = bytesOf(victim2).includes(SECRET);
  victim2.release();
  out.filledAtRelease = Buffer.from(dirty2.buffer).equals(Buffer.alloc(dirty2.buffer.byteLength));
  await new Promise((resolve) => setImmediate(resolve));
  out.filledSoonAfter = Buffer.from(dirty2.buffer).equals(Buffer.alloc(dirty2.buffer.byteLength));
  const next2 = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  out.recycledAgain = memoryOf(next2) === dirty2;
  out.differingBytesAfterFill = differingBytes(bytesOf(next2), bytesOf(fresh));
  for (const vm of [next, next2, fresh]) vm.release();
  process.stdout.write(JSON.stringify(out));
`;

/**
 * The same from inside: a hostile cell leaves what a guest can leave (globals, changed built-ins,
 * jobs still queued at its release, console output), and the next cell on its recycled instance
 * looks for it. It must
 * see what a cell on a new instance sees, and its host calls must reach its own run only.
 */
const GUEST_PROBE = String.raw`
${WITH_BOOT_IMAGE}
const SECRET = 'tenant-a-secret-5d20b8';
const sink = (lines) => ({ output(kind, text) { lines.push(text); }, request() { return 'id'; }, cancel() {} });
const run = (vm, code, lines) => {
  vm.bind(sink(lines), performance.now() + 5000);
  vm.start(code);
  vm.pump(2000);
  return vm.readValue();
};
const HOSTILE = [
  'globalThis.leak = ' + JSON.stringify(SECRET) + ';',
  'Object.prototype.inherited = globalThis.leak;',
  'Array.prototype.push = function () { return globalThis.leak; };',
  'JSON.stringify = () => globalThis.leak;',
  'Promise.resolve().then(() => { globalThis.later = globalThis.leak; });',
  'const again = () => { globalThis.spins = (globalThis.spins || 0) + 1; Promise.resolve().then(again); };',
  'again();',
  'new Promise(() => {});',
  'console.log(globalThis.leak);',
  'return 1;',
].join('\n');
const LOOK = [
  'const own = Object.getOwnPropertyNames(globalThis).sort().join(",");',
  'const found = [own, String(({}).inherited), String([].push(1)), typeof globalThis.later, typeof globalThis.spins, String(JSON.stringify).length];',
  'console.log("looked");',
  'return found;',
].join('\n');
  const hostile = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  const hostileLines = [];
  // Started only: released with its jobs still queued (they would never end anyway).
  hostile.bind(sink(hostileLines), performance.now() + 5000);
  out.hostile = hostile.start(HOSTILE).ok;
  out.hostileSaid = hostileLines.join('|');
  out.jobsLeftAtRelease = hostile.runtime.hasPendingJob();
  hostile.release();
  const next = await CellVm.fromBootImage(loader, image, DEFAULT_MEMORY_BYTES);
  out.instanceReused = next.instance === hostile.instance;
  const nextLines = [];
  const seen = run(next, LOOK, nextLines);
  out.jobsAfterNext = next.runtime.hasPendingJob();
  const fresh = await CellVm.fromBootImage(loader, image, 2 * DEFAULT_MEMORY_BYTES);
  const freshSeen = run(fresh, LOOK, []);
  out.freshIsNew = fresh.instance !== hostile.instance;
  out.seesWhatANewInstanceSees = seen.ok && seen.json === freshSeen.json;
  out.secretSeen = seen.json.includes(SECRET);
  out.nextSaid = nextLines.join('|');
  out.hostileHeardMore = hostileLines.length !== 1;
  for (const vm of [next, fresh]) vm.release();
  process.stdout.write(JSON.stringify(out));
`;

describe('a recycled instance (built engine)', () => {
  it("gives the next cell none of a hostile cell's globals, built-ins, jobs or host routes: it sees what a cell on a new instance sees", () => {
    expect(runBuiltEngineProbe(GUEST_PROBE, 30_000)).toEqual({
      hostile: true,
      hostileSaid: 'tenant-a-secret-5d20b8',
      jobsLeftAtRelease: true,
      instanceReused: true,
      freshIsNew: true,
      seesWhatANewInstanceSees: true,
      secretSeen: false,
      nextSaid: 'looked',
      jobsAfterNext: false,
      hostileHeardMore: false,
    });
  });

  it('gives the next run nothing of the previous run, filled on the spot or after the release: byte for byte what a new Memory + the image give', () => {
    expect(runBuiltEngineProbe(PROBE, 30_000)).toEqual({
      started: true,
      value: { ok: true, json: '64' },
      secretInVictim: true,
      grew: false,
      released: true,
      recycled: true,
      instanceReused: true,
      secretInNext: false,
      freshIsNew: true,
      sameLength: true,
      differingBytes: 0,
      secretInVictim2: true,
      filledAtRelease: false,
      filledSoonAfter: true,
      recycledAgain: true,
      differingBytesAfterFill: 0,
    });
  });
});

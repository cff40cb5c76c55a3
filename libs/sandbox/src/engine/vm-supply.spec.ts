import { runBuiltEngineProbe, secretLeavingCell } from './built-engine-probe';

/**
 * A thread's VM supply (built engine in a child Node process, like `recycled-memory.spec.ts`): the
 * spare goes only to a run with the default cap, the next one is prepared once the start's turn is
 * over, and a spare prepared after another tenant's cell, on that cell's own recycled Memory, holds
 * nothing of it: byte for byte what a new Memory + the image give, and the guest finds nothing.
 */
const PROBE = String.raw`
const { VmSupply } = require(ENGINE + '/vm-supply.js');
const { WasmLoader, DEFAULT_MEMORY_BYTES } = require(ENGINE + '/wasm-loader.js');
const { CellVm } = require(ENGINE + '/cell-vm.js');
const SECRET = 'tenant-a-secret-5be20d';
const CELL = ${JSON.stringify(secretLeavingCell('tenant-a-secret-5be20d'))};
const HOST = { output() {}, request() { return 'id'; }, cancel() {} };
const memoryOf = (vm) => vm.instance.memory;
const bytesOf = (vm) => Buffer.from(memoryOf(vm).buffer);
const turn = () => new Promise((resolve) => setImmediate(resolve));
const run = (vm, code) => {
  vm.bind(HOST, performance.now() + 5000);
  const started = vm.start(code);
  vm.pump(2000);
  return started.ok ? vm.readValue() : started;
};
  const out = { warm: 0, failed: [] };
  const loader = await WasmLoader.load('release');
  const supply = await VmSupply.open(loader, { warm: () => (out.warm += 1), failed: (msg) => out.failed.push(msg) });
  out.spareBeforePrepare = supply.hasSpare;
  out.prepared = await supply.prepare();
  const spare = await supply.prepare().then(() => supply.take(DEFAULT_MEMORY_BYTES));
  out.preparedOnce = out.warm === 1;

  // Another cap never takes the spare; the default one does, and the next spare waits for the next turn.
  await supply.prepare();
  const otherCap = await supply.take(2 * DEFAULT_MEMORY_BYTES);
  out.otherCapKeepsSpare = supply.hasSpare && otherCap.maxBytes === 2 * DEFAULT_MEMORY_BYTES;
  otherCap.release();
  const victim = await supply.take(DEFAULT_MEMORY_BYTES);
  out.tookSpare = !supply.hasSpare && victim !== spare;

  // Tenant A's cell on the spare (the first VM is kept until the end, so the victim's Memory is the
  // only one the next spare can get): its secret in a big string, in kept and freed ArrayBuffers, deep on
  // the wasm stack, within the Memory's initial pages (a Memory that grew is never recycled).
  out.victim = run(victim, CELL);
  const dirty = memoryOf(victim);
  out.secretInVictim = bytesOf(victim).includes(SECRET);
  victim.release();
  // What the thread does once the answer has left: the next spare, at once (before the loader's deferred fill).
  await turn();
  out.refilled = supply.hasSpare;
  const next = await supply.take(DEFAULT_MEMORY_BYTES);
  out.onVictimsMemory = memoryOf(next) === dirty;
  out.secretInNext = bytesOf(next).includes(SECRET);

  // What a never-used Memory + the image give; only Math.random's 8-byte state differs (seeded per VM).
  const fresh = await supply.build(4 * DEFAULT_MEMORY_BYTES);
  const image = supply.image.vm;
  const seed = image.contextPointer + image.randomStateOffset;
  const a = bytesOf(next);
  const b = bytesOf(fresh);
  let differing = 0;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i] && (i < seed || i >= seed + 8)) differing += 1;
  out.sameLength = a.length === b.length;
  out.differingBytes = differing;

  // Tenant B's cell on it finds nothing of A's.
  out.tenantB = run(next, 'return [typeof globalThis.big, typeof globalThis.keep, Object.keys(globalThis).filter((k) => /big|keep|stamp/.test(k))]');
  for (const vm of [spare, next, fresh]) vm.release();
  process.stdout.write(JSON.stringify(out));
`;

describe('VmSupply (built engine)', () => {
  it('gives the spare only to a default-cap run, prepares the next after the turn, and a spare on a previous cell’s Memory holds nothing of that cell', () => {
    expect(runBuiltEngineProbe(PROBE, 30_000)).toEqual({
      warm: 3,
      failed: [],
      spareBeforePrepare: false,
      prepared: true,
      preparedOnce: true,
      otherCapKeepsSpare: true,
      tookSpare: true,
      victim: { ok: true, json: '64' },
      secretInVictim: true,
      refilled: true,
      onVictimsMemory: true,
      secretInNext: false,
      sameLength: true,
      differingBytes: 0,
      tenantB: { ok: true, json: '["undefined","undefined",[]]' },
    });
  });
});

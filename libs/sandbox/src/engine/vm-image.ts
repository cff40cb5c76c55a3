import { randomFillSync } from 'node:crypto';
import { Lifetime, QuickJSRuntime, type QuickJSContext, type QuickJSHandle, type VmFunctionImplementation } from 'quickjs-emscripten-core';
import { VmImageError } from '../errors';
import { nonZeroPages, SCAN_PAGE_BYTES } from './memory-pages';
import { WASM_PAGE_BYTES, type WasmInstance, type WasmLoader } from './wasm-loader';

/**
 * Capture and restore of an idle QuickJS VM (quickjs-emscripten-core 0.32.0, pinned): everything
 * QuickJS owns lives in the instance's linear memory, so the memory's pages plus the few pointers
 * the library keeps on the host side are the whole VM. Restoring takes a module instance of the
 * same binary (new, or recycled with its Memory zero-filled: `WasmLoader.instanceForImage`), writes
 * the pages into its Memory and re-wraps the runtime, the context, the kept handles and the host
 * functions (under the same HostRef ids). Uses private members of the
 * library (`vm-image.spec.ts` covers the surgery; re-check it on any version change).
 *
 * Capture only between calls into the wasm (never from inside a host function): the wasm stack is
 * then back at its start. An image is attacker-influenced memory once guest code ran in it: restore
 * only images this process produced.
 */

/** A live VM: its instance, runtime, context, and the handles its owner keeps across calls. */
export interface VmParts {
  instance: WasmInstance;
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  /** Handles the owner keeps (restored in the same order). */
  handles: QuickJSHandle[];
}

/** An immutable copy of an idle VM. */
export interface VmImage {
  /** sha256 of the wasm binary it was captured from. */
  readonly wasmHash: string;
  /** Size of the captured memory in 64 KiB wasm pages. */
  readonly memoryPages: number;
  /** Runs of stored 4 KiB pages as [first page, page count] pairs; their bytes follow in `bytes`. */
  readonly runs: Uint32Array;
  readonly bytes: Uint8Array;
  readonly runtimePointer: number;
  readonly contextPointer: number;
  /** The context's cached global object handle, when the library had made one. */
  readonly globalPointer: number | undefined;
  /** The 4-byte scratch buffer every QuickJSContext allocates; the restored context has its own. */
  readonly scratchPointer: number;
  readonly handlePointers: readonly number[];
  /** HostRef ids of the live host functions, in registration order. */
  readonly hostRefIds: readonly number[];
  /** Offset of `JSContext.random_state` (Math.random's state), re-seeded on every restore. */
  readonly randomStateOffset: number;
}

/** Makes the host functions of a restored context, in the order they were first registered. */
export type HostFunctionFactory = (context: QuickJSContext) => readonly VmFunctionImplementation<QuickJSHandle>[];

/** The private members of quickjs-emscripten-core 0.32 the surgery reads and writes. */
interface ModuleInternals {
  module: { _free(pointer: number): void };
  ffi: { QTS_FreeRuntime(pointer: number): void };
  callbacks: { deleteRuntime(pointer: number): void };
}
interface HostRefInternals {
  nextId: number;
  freelist: number[];
  groups: Map<number, Map<number, unknown>>;
  put(value: unknown): number;
}
interface RuntimeInternals {
  rt: Lifetime<number>;
  hostRefs: HostRefInternals;
  contextMap: Map<number, QuickJSContext>;
  context: QuickJSContext | undefined;
  moduleLoader: unknown;
}
interface ContextInternals {
  ctx: Lifetime<number>;
  memory: { heapValueHandle(pointer: number): QuickJSHandle; staticHeapValueHandle(pointer: number): QuickJSHandle };
  uint32Out: Lifetime<{ ptr: number }>;
  _global: QuickJSHandle | undefined;
  _BigInt: unknown;
  _Symbol: unknown;
  _SymbolIterator: unknown;
  _SymbolAsyncIterator: unknown;
}

const INT32_MIN = -2147483648;
/** How far into JSContext to look for `random_state` (the struct is ~1 KiB in this build). */
const RANDOM_STATE_SEARCH_BYTES = 4096;

/**
 * Copies an idle VM. Without `randomStateOffset` the VM stays usable but must not be what a run
 * uses: its Math.random state is probed to find that offset. With it (known from the image the VM
 * was restored from) nothing runs in the VM: a parked run is captured so and goes on unchanged.
 * Throws `VmImageError` when the VM holds host-side state the image cannot carry.
 */
export function capture(parts: VmParts, loader: WasmLoader, randomStateOffset?: number): VmImage {
  const runtime = parts.runtime as unknown as RuntimeInternals;
  const context = parts.context as unknown as ContextInternals;
  if (runtime.contextMap.size !== 1 || runtime.context !== undefined || runtime.moduleLoader !== undefined) {
    throw new VmImageError('cannot capture a VM image: the runtime has more than its one context or a module loader');
  }
  if (context._BigInt || context._Symbol || context._SymbolIterator || context._SymbolAsyncIterator) {
    throw new VmImageError('cannot capture a VM image: the context cached intrinsics the image cannot re-wrap');
  }
  const hostRefIds = [...runtime.hostRefs.groups.values()].flatMap((group) => [...group.keys()]).sort((a, b) => a - b);
  // put() hands out ids from INT32_MIN upwards: a restore reproduces them only when they are contiguous.
  if (
    runtime.hostRefs.freelist.length > 0 ||
    hostRefIds.some((id, index) => id !== INT32_MIN + index) ||
    runtime.hostRefs.nextId !== INT32_MIN + hostRefIds.length
  ) {
    throw new VmImageError('cannot capture a VM image: host functions were freed, their ids would not line up');
  }
  const contextPointer = context.ctx.value;
  const randomOffset = randomStateOffset ?? probeRandomState(parts);
  const memory = new Uint8Array(parts.instance.memory.buffer);
  const pages = mergePages(nonZeroPages(memory), loader.initPages);
  const runs: number[] = [];
  for (const page of pages) {
    const last = runs.length - 2;
    if (last >= 0 && runs[last] + runs[last + 1] === page) runs[last + 1] += 1;
    else runs.push(page, 1);
  }
  const bytes = new Uint8Array(pages.length * SCAN_PAGE_BYTES);
  let at = 0;
  for (let i = 0; i < runs.length; i += 2) {
    const start = runs[i] * SCAN_PAGE_BYTES;
    const length = runs[i + 1] * SCAN_PAGE_BYTES;
    bytes.set(memory.subarray(start, start + length), at);
    at += length;
  }
  return {
    wasmHash: loader.wasmHash,
    memoryPages: memory.byteLength / WASM_PAGE_BYTES,
    runs: Uint32Array.from(runs),
    bytes,
    runtimePointer: runtime.rt.value,
    contextPointer,
    globalPointer: context._global?.value,
    scratchPointer: context.uint32Out.value.ptr,
    handlePointers: parts.handles.map((handle) => handle.value),
    hostRefIds,
    randomStateOffset: randomOffset,
  };
}

/**
 * A live VM from an image, on an instance of the loader's binary (see `WasmLoader.instanceForImage`) whose Memory has at most
 * `maxBytes`: memory filled from the image, runtime and context re-wrapped, host functions
 * registered again in their original order, Math.random re-seeded. Stack size, memory limit and
 * interrupt handler are not part of the VM's host side: the caller sets them.
 */
export async function instantiateImage(
  loader: WasmLoader,
  image: VmImage,
  maxBytes: number,
  hostFunctions: HostFunctionFactory,
): Promise<VmParts> {
  if (image.wasmHash !== loader.wasmHash) {
    throw new VmImageError(
      `cannot restore a VM image of wasm ${image.wasmHash.slice(0, 12)} into wasm ${loader.wasmHash.slice(0, 12)}: not the same binary`,
    );
  }
  if (image.memoryPages * WASM_PAGE_BYTES > loader.maxBytesFor(maxBytes)) {
    throw new VmImageError(`cannot restore a VM image of ${image.memoryPages * WASM_PAGE_BYTES} bytes under a ${maxBytes}-byte memory cap`);
  }
  const instance = await loader.instanceForImage(maxBytes, image.memoryPages);
  const memory = new Uint8Array(instance.memory.buffer);
  let at = 0;
  for (let i = 0; i < image.runs.length; i += 2) {
    const length = image.runs[i + 1] * SCAN_PAGE_BYTES;
    memory.set(image.bytes.subarray(at, at + length), image.runs[i] * SCAN_PAGE_BYTES);
    at += length;
  }
  const internals = instance.module as unknown as ModuleInternals;
  const rt = new Lifetime(image.runtimePointer, undefined, (pointer: number) => {
    internals.ffi.QTS_FreeRuntime(pointer);
    internals.callbacks.deleteRuntime(pointer);
  });
  type RuntimeArgs = ConstructorParameters<typeof QuickJSRuntime>[0];
  const runtime = new QuickJSRuntime({
    module: internals.module,
    ffi: internals.ffi,
    callbacks: internals.callbacks,
    rt,
  } as unknown as RuntimeArgs);
  const context = runtime.newContext({ contextPointer: image.contextPointer as never });
  const contextInternals = context as unknown as ContextInternals;
  // The new wrapper allocated its own scratch word; the captured one is nobody's now.
  internals.module._free(image.scratchPointer);
  if (image.globalPointer !== undefined) contextInternals._global = contextInternals.memory.staticHeapValueHandle(image.globalPointer);
  const hostRefs = (runtime as unknown as RuntimeInternals).hostRefs;
  const functions = hostFunctions(context);
  if (functions.length !== image.hostRefIds.length) {
    throw new VmImageError(`cannot restore a VM image with ${image.hostRefIds.length} host functions from ${functions.length}`);
  }
  functions.forEach((fn, index) => {
    const id = hostRefs.put(fn);
    if (id !== image.hostRefIds[index])
      throw new VmImageError(`cannot restore a VM image: host function ${index} got id ${id}, not ${image.hostRefIds[index]}`);
  });
  seedRandom(instance, image.contextPointer + image.randomStateOffset);
  const handles = image.handlePointers.map((pointer) => contextInternals.memory.heapValueHandle(pointer));
  return { instance, runtime, context, handles };
}

/** Math.random states drawn ahead: the generator is called once per SEEDS_DRAWN cells, not per cell. */
const SEEDS_DRAWN = 256;
const seeds = new BigUint64Array(SEEDS_DRAWN);
let seedsLeft = 0;

/** A fresh, non-zero Math.random state (QuickJS seeds it from the clock when a context is made). */
function seedRandom(instance: WasmInstance, address: number): void {
  let seed = 0n;
  while (seed === 0n) {
    if (seedsLeft === 0) {
      randomFillSync(seeds);
      seedsLeft = SEEDS_DRAWN;
    }
    seedsLeft -= 1;
    seed = seeds[seedsLeft];
  }
  new DataView(instance.memory.buffer).setBigUint64(address, seed, true);
}

/**
 * Finds `JSContext.random_state` of this build: calls Math.random once and keeps the one 8-byte
 * slot of the context whose old value, stepped by QuickJS's xorshift64*, gives that number and
 * now holds the stepped state. Anything else is refused.
 */
function probeRandomState(parts: VmParts): number {
  const view = new DataView(parts.instance.memory.buffer);
  const base = (parts.context as unknown as ContextInternals).ctx.value;
  const before: bigint[] = [];
  for (let offset = 0; offset < RANDOM_STATE_SEARCH_BYTES; offset += 8) before.push(view.getBigUint64(base + offset, true));
  const result = parts.context.evalCode('Math.random()', 'codemode:vm-image.js');
  if (result.error) {
    result.error.dispose();
    throw new VmImageError('cannot capture a VM image: Math.random failed');
  }
  const drawn = parts.context.getNumber(result.value);
  result.value.dispose();
  const hits = before.flatMap((old, index) => {
    const offset = index * 8;
    if (old === 0n) return [];
    const [value, next] = xorshift64star(old);
    return value === drawn && view.getBigUint64(base + offset, true) === next ? [offset] : [];
  });
  if (hits.length !== 1) throw new VmImageError(`cannot capture a VM image: Math.random state not found (${hits.length} candidates)`);
  return hits[0];
}

const MASK_64 = (1n << 64n) - 1n;

/** QuickJS's Math.random step: the next state and the double in [0, 1) it yields. */
function xorshift64star(state: bigint): [number, bigint] {
  let x = state;
  x ^= x >> 12n;
  x ^= (x << 25n) & MASK_64;
  x ^= x >> 27n;
  const bits = (0x3ffn << 52n) | (((x * 0x2545f4914f6cdd1dn) & MASK_64) >> 12n);
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, bits, true);
  return [view.getFloat64(0, true) - 1, x];
}

function mergePages(a: readonly number[], b: readonly number[]): number[] {
  return [...new Set([...a, ...b])].sort((x, y) => x - y);
}

import './wasm-globals';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  type EmscriptenModuleLoader,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSEmscriptenModule,
  type QuickJSFFI,
  type QuickJSSyncVariant,
  QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { nonZeroPages, zeroFill } from './memory-pages';
import { readMemoryImportLayout, withMemoryMinimum } from './wasm-memory-import';
import type { SandboxVariant } from './types';

export const WASM_PAGE_BYTES = 64 * 1024;
/**
 * The smallest memory cap a run gets (a lower `memoryLimitBytes` is left to QuickJS's own limit, see
 * `CellVm.applyLimits`). Not a Memory's initial size any more: that is `WasmLoader.floorPages`.
 */
export const MIN_MEMORY_BYTES = 16 * 1024 * 1024;
/** Maximum of the instance a thread prepares ahead of time: the default `memoryLimitBytes`. */
export const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
/** The debug build runs LeakSanitizer inside the instance and needs far more room (tests only). */
const DEBUG_MEMORY_FLOOR_BYTES = 512 * 1024 * 1024;
/** Recycled instances kept per initial size and maximum; more are left to the garbage collector. */
const SPARE_INSTANCES_PER_MAX = 2;
/**
 * Recycled instances kept by a thread in all: a tenant picks its memory cap, so the stocks' keys
 * are many, and each stocked instance holds its Memory (~6 MiB, written by its last run).
 */
const SPARE_INSTANCES_IN_ALL = 4;

/** The library's routes from the wasm to the host (quickjs-emscripten-core 0.32.0, private): runtime and context by pointer. */
interface ModuleInternals {
  callbacks: { runtimeCallbacks: Map<number, unknown>; contextCallbacks: Map<number, unknown> };
}

/** What a release build instance is made of, resolved once per thread (see `WasmLoader.instantiate`). */
interface ReleaseParts {
  moduleLoader: EmscriptenModuleLoader<QuickJSEmscriptenModule>;
  Ffi: new (module: QuickJSEmscriptenModule) => QuickJSFFI;
}

/** A QuickJS module instance with its own linear memory: used by one run at a time. */
export interface WasmInstance {
  module: QuickJSWASMModule;
  memory: WebAssembly.Memory;
  /** The pages its Memory was made with: recycled only while it still has exactly these. */
  initialPages: number;
  maxBytes: number;
  /** Reads the wasm stack pointer; undefined when the binary has no reader of it (see `readMemoryImportLayout`). */
  readonly stackPointer: (() => number) | undefined;
}

/** Wasm memory maximum for a run: max(limit, 16 MiB), rounded up to whole pages. */
export function memoryMaxBytes(memoryLimitBytes: number): number {
  const bytes = Math.max(memoryLimitBytes, MIN_MEMORY_BYTES);
  return Math.ceil(bytes / WASM_PAGE_BYTES) * WASM_PAGE_BYTES;
}

/**
 * Compiles the variant's wasm once (per thread) and builds instances from it, each with its own
 * `WebAssembly.Memory` whose maximum is the run's hard memory cap, used by one run at a time.
 *
 * The release binary is compiled with its imported memory's minimum lowered from the 256 pages
 * (16 MiB) it declares to its static layout (data and the 5 MiB stack, ~5.1 MiB): a Memory starts
 * that small, or as large as the image restored into it, and the allocator grows it on demand
 * (`emscripten_resize_heap`, up to the Memory's maximum, which stays the hard cap). Less memory to
 * zero-fill per cell, the cost that dominated a cell start. The debug build keeps its 256 pages
 * (its glue checks the memory it was built for).
 *
 * Instances are recycled: a new `WebAssembly.Memory` per run made V8 account 16 MiB of external
 * memory per instance and run a full GC every few runs (~3 ms CPU per run), and a new instance with
 * its emscripten glue and FFI costs ~0.6 ms of CPU (the `Instance` ~0.15 ms, the glue's closures and
 * their garbage the rest). An instance comes back only from a VM that was released cleanly (the VM
 * is never called again) and whose Memory never grew past its initial size, and its Memory is
 * zero-filled before it serves again, so the next run starts from exactly what a new Memory holds:
 * as many zero pages, with the same maximum. The fill (~0.1–0.7 ms) runs once the releasing task is
 * done (the finished run's answer has left), so the next cell start does not wait for it; an
 * instance taken before its fill ran is filled on the spot.
 *
 * A run restored from an image (`instanceForImage`) gets the whole recycled instance: its zero-filled
 * Memory is then written with the image, which carries every page a new instance's start-up writes
 * (`initPages`), so the Memory ends as a new instance's would. What lives outside the Memory is made
 * fresh too, or does not matter:
 * - the one wasm global, the stack pointer, must be back at the stack's top. A call that threw out
 *   of the wasm without unwinding through its caller's frames leaves it lower (a trap inside a
 *   wrapper that allocated on the wasm stack: emscripten's `ccall` restores the stack only when
 *   the call returns); such an instance is not reused, only its Memory. The function table is not
 *   exported and no code of the binary writes or grows it.
 * - the library's routes from the wasm to the host (`runtimeCallbacks`, `contextCallbacks`, by
 *   runtime and context pointer) are cleared at the recycle, so a stocked instance holds nothing of
 *   its last run's host side (its interrupt handler reaches the whole run); the restore registers
 *   the new run's own.
 * - the emscripten glue keeps a little state of its own per instance: stdout/stderr line buffers
 *   (only a wasm `fd_write` reaches them, and they print to the worker's log, never to a guest),
 *   the abort flag and keep-alive counters (an abort throws out of the wasm: that VM is discarded,
 *   never recycled), and timers only its own timer export arms (the guest cannot call it).
 * A run built from scratch needs the binary's data segments and constructors, which only a new
 * instance runs: it gets a recycled Memory under a new instance.
 */
export class WasmLoader {
  /** `stockKey(initial pages, maximum bytes)` → finished, released instances, their Memory not zero-filled yet. */
  private readonly dirty = new Map<string, WasmInstance[]>();
  /** `stockKey(initial pages, maximum bytes)` → recycled instances whose Memory was zero-filled since their release. */
  private readonly clean = new Map<string, WasmInstance[]>();
  /** Name of the export that reads the stack pointer (release build); undefined: instances are never reused, only their Memory. */
  private stackPointerExport: string | undefined;
  private scrubbing: NodeJS.Immediate | undefined;

  /**
   * 4 KiB pages a bare instance has non-zero right after it was built (data segments, the initial
   * stack frame): a VM image always carries these, so restoring it over a new instance leaves no
   * byte of that instance's own start-up behind.
   */
  private initPageList: readonly number[] = [];

  private constructor(
    private readonly variant: QuickJSSyncVariant,
    private readonly compiled: WebAssembly.Module,
    private readonly floorBytes: number,
    /** Initial pages of a Memory built without an image: the binary's data and stack, nothing of the heap. */
    readonly floorPages: number,
    /** sha256 of the wasm binary: a VM image restores only into the binary it was captured from. */
    readonly wasmHash: string,
    /** The stack pointer's initial value: where it is between calls into the wasm. */
    private readonly stackTop: number,
    /** Set for the release build only: the debug build's glue needs the library's loader (source maps, offset converter). */
    private readonly release: ReleaseParts | undefined,
  ) {}

  static async load(which: SandboxVariant): Promise<WasmLoader> {
    const variant = await loadVariant(which);
    const bytes = await readFile(wasmFilePath(which));
    const layout = readMemoryImportLayout(bytes);
    const floorPages = which === 'release' ? Math.ceil(layout.stackTop / WASM_PAGE_BYTES) : layout.declaredPages;
    const compiled = await WebAssembly.compile(withMemoryMinimum(bytes, layout, floorPages));
    // The hash of the file as shipped: the lowered minimum is derived from it, never stored apart.
    const hash = createHash('sha256').update(bytes).digest('hex');
    const release = which === 'release' ? await releaseParts(variant) : undefined;
    const floorBytes = which === 'debug' ? DEBUG_MEMORY_FLOOR_BYTES : 0;
    const loader = new WasmLoader(variant, compiled, floorBytes, floorPages, hash, layout.stackTop, release);
    // emscripten's glue keeps the stack pointer's reader to itself (a minified export name that may
    // change with any build): the binary says which export it is. Without it, no instance is reused.
    if (release) loader.stackPointerExport = layout.stackPointerReader;
    // A bare instance, never called: what start-up alone writes. It then serves the next run.
    const bare = await loader.instantiate(DEFAULT_MEMORY_BYTES);
    loader.initPageList = nonZeroPages(new Uint8Array(bare.memory.buffer));
    loader.recycle(bare);
    return loader;
  }

  /**
   * True for the debug build, whose teardown (`QTS_FreeRuntime`) checks for leaked QuickJS objects.
   * A release VM needs no teardown: what it left outside its Memory is dropped when its instance is
   * recycled (see the class comment), and its Memory is zero-filled before it serves again (see
   * `takeSpare`).
   */
  get checksLeaks(): boolean {
    return this.release === undefined;
  }

  /** The Memory maximum an instance asked for with `requestedMaxBytes` gets (the debug build's floor applies). */
  maxBytesFor(requestedMaxBytes: number): number {
    return Math.max(requestedMaxBytes, this.floorBytes);
  }

  /** 4 KiB page indexes that start-up of every instance of this binary writes (see `initPageList`). */
  get initPages(): readonly number[] {
    return this.initPageList;
  }

  /**
   * A new instance whose Memory has `initialPages` pages (a VM image needs as many as its memory
   * had; at least the floor) and at most `requestedMaxBytes` (raised to the debug floor), on a
   * recycled Memory when one fits.
   */
  async instantiate(requestedMaxBytes: number, initialPages = this.floorPages): Promise<WasmInstance> {
    const maxBytes = this.maxBytesFor(requestedMaxBytes);
    const pages = Math.max(initialPages, this.floorPages);
    return this.build(this.takeSpare(pages, maxBytes)?.memory, pages, maxBytes);
  }

  /**
   * An instance for a VM image of `initialPages` pages to be written into, capped at
   * `requestedMaxBytes`: a recycled one when one fits and is fresh outside its Memory (see the
   * class comment), else a new one. Its Memory is all zeros.
   */
  async instanceForImage(requestedMaxBytes: number, initialPages: number): Promise<WasmInstance> {
    const maxBytes = this.maxBytesFor(requestedMaxBytes);
    const pages = Math.max(initialPages, this.floorPages);
    const spare = this.takeSpare(pages, maxBytes);
    if (!spare || spare.stackPointer?.() !== this.stackTop) return this.build(spare?.memory, pages, maxBytes);
    return spare;
  }

  /** A new instance on `spareMemory`, else on a new Memory. */
  private async build(spareMemory: WebAssembly.Memory | undefined, pages: number, maxBytes: number): Promise<WasmInstance> {
    const memory = spareMemory ?? new WebAssembly.Memory({ initial: pages, maximum: maxBytes / WASM_PAGE_BYTES });
    if (!this.release) {
      const variant = newVariant(this.variant, { wasmModule: this.compiled, wasmMemory: memory });
      const module = await newQuickJSWASMModuleFromVariant(variant);
      return { module, memory, initialPages: pages, maxBytes, stackPointer: undefined };
    }
    // What newQuickJSWASMModuleFromVariant does, minus its per-instance dynamic imports and promise
    // hops (~0.1 ms p50, ~0.7 ms p90 per instance): the same glue, FFI and module classes.
    const compiled = this.compiled;
    let wasmExports: Record<string, unknown> = {};
    const glue = await this.release.moduleLoader({
      wasmMemory: memory,
      instantiateWasm: (imports: object, receive) => {
        const instance = new WebAssembly.Instance(compiled, imports);
        wasmExports = instance.exports as Record<string, unknown>;
        receive(instance);
        return instance.exports;
      },
    });
    glue.type = 'sync';
    const reader = this.stackPointerExport === undefined ? undefined : wasmExports[this.stackPointerExport];
    const module = new QuickJSWASMModule(glue, new this.release.Ffi(glue));
    const stackPointer = typeof reader === 'function' ? (reader as () => number) : undefined;
    return { module, memory, initialPages: pages, maxBytes, stackPointer };
  }

  /**
   * Takes back an instance that was released: its VM will never run again. Kept only when its
   * Memory is still at its initial size (a grown Memory cannot shrink: dropped).
   */
  recycle(instance: WasmInstance): void {
    if (instance.memory.buffer.byteLength !== instance.initialPages * WASM_PAGE_BYTES) return;
    const key = stockKey(instance.initialPages, instance.maxBytes);
    if (stockOf(this.dirty, key).length + stockOf(this.clean, key).length >= SPARE_INSTANCES_PER_MAX) return;
    if (this.stocked() >= SPARE_INSTANCES_IN_ALL) return;
    const callbacks = (instance.module as unknown as ModuleInternals).callbacks;
    callbacks.runtimeCallbacks.clear();
    callbacks.contextCallbacks.clear();
    stockOf(this.dirty, key).push(instance);
    this.scrubbing ??= setImmediate(() => this.scrub());
    // A thread with nothing else to do may exit meanwhile: the next start fills on the spot.
    this.scrubbing.unref();
  }

  private stocked(): number {
    let count = 0;
    for (const stocks of [this.dirty, this.clean]) for (const stock of stocks.values()) count += stock.length;
    return count;
  }

  /** Zero-fills the Memory of every recycled instance not filled yet (see `takeSpare` for how, and why all of it). */
  private scrub(): void {
    this.scrubbing = undefined;
    for (const [key, stock] of this.dirty) {
      for (let instance = stock.pop(); instance; instance = stock.pop()) {
        zeroFill(new Uint8Array(instance.memory.buffer));
        stockOf(this.clean, key).push(instance);
      }
    }
  }

  /**
   * A recycled instance of these initial pages and this maximum, every byte of its Memory's old run
   * erased: filled by `scrub` already, or zero-filled now.
   *
   * All of it, on purpose: the rule is that a run starts from exactly what a new Memory + the
   * image hold, whatever the previous run did. Zeroing only up to a high-water mark (the sbrk break,
   * the stack's deepest point) was measured and rejected: that mark lives in the linear memory the
   * previous run's guest code drove, so a guest that corrupts QuickJS's heap can write above it and
   * leave the mark low; its bytes would then reach the next run (another tenant's) through sbrk,
   * and count in that run's parked size (SPEC §3: non-zero pages).
   * Nothing the host can see bounds the wasm's stores below the Memory's size, so every chunk is
   * looked at: `zeroFill` reads each 64 KiB and writes only those holding a non-zero byte. Hot in
   * cache, reading a 16 MiB Memory (memcmp, ~0.95 ms) cost more than writing it (~0.7 ms); in the
   * exec workload a finished cell's Memory is mostly out of cache and mostly an untouched stack,
   * and the scan cost the thread ~0.17 ms less per cell than a `fill(0)` of all of it.
   */
  private takeSpare(initialPages: number, maxBytes: number): WasmInstance | undefined {
    const key = stockKey(initialPages, maxBytes);
    const filled = this.clean.get(key)?.pop();
    if (filled) return filled;
    const instance = this.dirty.get(key)?.pop();
    if (!instance) return undefined;
    zeroFill(new Uint8Array(instance.memory.buffer));
    return instance;
  }
}

function stockKey(initialPages: number, maxBytes: number): string {
  return `${initialPages}/${maxBytes}`;
}

function stockOf(stocks: Map<string, WasmInstance[]>, key: string): WasmInstance[] {
  let stock = stocks.get(key);
  if (!stock) {
    stock = [];
    stocks.set(key, stock);
  }
  return stock;
}

/** sha256 of the variant's wasm binary, the hash a VM image of it is bound to. */
export async function wasmFileHash(which: SandboxVariant): Promise<string> {
  return createHash('sha256')
    .update(await readFile(wasmFilePath(which)))
    .digest('hex');
}

function wasmFilePath(which: SandboxVariant): string {
  return which === 'debug'
    ? require.resolve('@jitl/quickjs-wasmfile-debug-sync/wasm')
    : require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
}

async function releaseParts(variant: QuickJSSyncVariant): Promise<ReleaseParts> {
  const imported = await variant.importModuleLoader();
  const moduleLoader =
    typeof imported === 'function' ? imported : typeof imported.default === 'function' ? imported.default : imported.default.default;
  return { moduleLoader, Ffi: await variant.importFFI() };
}

async function loadVariant(which: SandboxVariant): Promise<QuickJSSyncVariant> {
  if (which === 'debug') return (await import('@jitl/quickjs-wasmfile-debug-sync')).default;
  return (await import('@jitl/quickjs-wasmfile-release-sync')).default;
}

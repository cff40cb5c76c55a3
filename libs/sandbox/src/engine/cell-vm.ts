import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';
import { SandboxEngineError } from '../errors';
import { CELL_FILE, CELL_PREFIX, CELL_SUFFIX } from '../guest/prelude';
import { type GuestErrorRecord, parseGuestErrorRecord } from './guest-error';
import { installDeterminism, installPrelude } from './guest-install';
import { nonZeroPageCount, SCAN_PAGE_BYTES } from './memory-pages';
import type { PreparedCatalog } from './prepared-catalog';
import { capture, instantiateImage, type VmImage } from './vm-image';
import { hostFunctions, type VmHostSink } from './vm-host-functions';
import { memoryMaxBytes, MIN_MEMORY_BYTES, type WasmInstance, type WasmLoader } from './wasm-loader';

/**
 * QuickJS stack limit. Deep parser recursion uses ~25× more native (V8) stack than QuickJS
 * accounts for, so the thread runs with a 32 MiB stack (see SANDBOX_THREAD_STACK_MB).
 */
export const QUICKJS_MAX_STACK_BYTES = 512 * 1024;

/**
 * A prepared VM (prelude, tool API, text codec, console installed; no run's data) as an image:
 * every cell of a thread starts from a copy of it instead of compiling the guest sources again.
 */
export interface PreparedImage {
  readonly vm: VmImage;
  /** The catalog whose handles the image holds prepared (installPrelude), if any. */
  readonly prepared?: PreparedCatalog;
}

export type { VmHostSink };

export type PromiseStateName = 'pending' | 'fulfilled' | 'rejected';
type Started = { ok: true } | { ok: false; compile: boolean; record: GuestErrorRecord };

/**
 * One QuickJS runtime+context in a wasm instance of its own while it lives, with the prelude
 * installed. Used by one run, then released (its instance recycled), or discarded when its memory
 * hit the maximum or the host side failed.
 */
export class CellVm {
  private deadline = Infinity;
  private interrupted = false;
  private halted = false;
  private stopCondition: () => boolean = () => false;
  private broken = false;
  /** Released: its Memory may already hold another run; nothing may touch this VM again. */
  private released = false;
  private sink: VmHostSink | undefined;
  private resultPromise: QuickJSHandle | undefined;
  /** A cell was started here: its data is in this VM's memory, which may never become a prepared image. */
  private started = false;
  /** Offset of Math.random's state, known when this VM came from an image: a parked run can be captured. */
  private randomStateOffset: number | undefined;
  /** The catalog whose handles this VM holds prepared: what a run's catalog is sent in as (`PreparedCatalog.forGuest`). */
  private prepared: PreparedCatalog | undefined;
  private readonly handles: QuickJSHandle[] = [];
  private settleFn!: QuickJSHandle;
  private serializeFn!: QuickJSHandle;
  private describeFn!: QuickJSHandle;
  private unhandledFn!: QuickJSHandle;
  private defineCatalogFn!: QuickJSHandle;

  private constructor(
    private readonly loader: WasmLoader,
    private readonly instance: WasmInstance,
    private readonly runtime: QuickJSRuntime,
    private readonly ctx: QuickJSContext,
    readonly memoryLimitBytes: number,
  ) {}

  /**
   * A VM built from scratch: new instance, runtime, context, guest sources compiled and run, and
   * the handles of a `prepared` catalog built (installPrelude).
   */
  static async create(loader: WasmLoader, memoryLimitBytes: number, prepared?: PreparedCatalog): Promise<CellVm> {
    const instance = await loader.instantiate(memoryMaxBytes(memoryLimitBytes));
    const runtime = instance.module.newRuntime();
    const vm = new CellVm(loader, instance, runtime, runtime.newContext(), memoryLimitBytes);
    vm.applyLimits();
    vm.adoptHandles(installPrelude(vm.ctx, () => vm, prepared?.json));
    vm.prepared = prepared;
    return vm;
  }

  /**
   * A VM that starts from the boot image (the prepared VM every cell starts from; not a parked
   * run's image, see `restoreParked`): an instance of its own (cap from this run's
   * `memoryLimitBytes`; a recycled one when the loader has one), its Memory filled from the image; the limits are this run's, set after it is filled.
   */
  static async fromBootImage(loader: WasmLoader, image: PreparedImage, memoryLimitBytes: number): Promise<CellVm> {
    // The host functions are registered while the image is instantiated, before the VM they talk to exists.
    const owner: { vm?: CellVm } = {};
    const parts = await instantiateImage(loader, image.vm, memoryMaxBytes(memoryLimitBytes), (ctx) => hostFunctions(ctx, () => owner.vm));
    const vm = new CellVm(loader, parts.instance, parts.runtime, parts.context, memoryLimitBytes);
    owner.vm = vm;
    vm.applyLimits();
    vm.adoptHandles(parts.handles);
    vm.randomStateOffset = image.vm.randomStateOffset;
    vm.prepared = image.prepared;
    return vm;
  }

  /** A parked run's VM from its image (SPEC §12): handles, result promise, host functions (`clock` if `seeded`) re-wrapped. */
  static async restoreParked(loader: WasmLoader, image: VmImage, memoryLimitBytes: number, seeded: boolean): Promise<CellVm> {
    const owner: { vm?: CellVm } = {};
    const parts = await instantiateImage(loader, image, memoryMaxBytes(memoryLimitBytes), (ctx) =>
      hostFunctions(ctx, () => owner.vm, seeded),
    );
    const vm = new CellVm(loader, parts.instance, parts.runtime, parts.context, memoryLimitBytes);
    owner.vm = vm;
    vm.applyLimits();
    const [resultPromise, ...prelude] = parts.handles;
    vm.adoptHandles(prelude);
    vm.resultPromise = resultPromise;
    vm.started = true;
    vm.randomStateOffset = image.randomStateOffset;
    return vm;
  }

  /**
   * The image of a parked (idle) run's VM, its result promise kept; nothing runs in the VM.
   * @throws VmImageError when this VM cannot be captured (built from scratch, or its host side does not line up)
   */
  captureParked(): VmImage {
    if (!this.started || this.released || this.broken || !this.resultPromise || this.randomStateOffset === undefined) {
      throw new SandboxEngineError('only a parked VM restored from an image can be captured');
    }
    const parts = { instance: this.instance, runtime: this.runtime, context: this.ctx, handles: [this.resultPromise, ...this.handles] };
    return capture(parts, this.loader, this.randomStateOffset);
  }

  /**
   * The image of a VM that was just created and never ran a cell; this VM must then be released,
   * never run (its Math.random was probed).
   */
  captureImage(): PreparedImage {
    if (this.started || this.released || this.broken) throw new SandboxEngineError('only a fresh prepared VM can be captured');
    return {
      vm: capture({ instance: this.instance, runtime: this.runtime, context: this.ctx, handles: this.handles }, this.loader),
      prepared: this.prepared,
    };
  }

  /** The wasm memory maximum this VM was built for (the run's cap, before any debug floor). */
  get maxBytes(): number {
    return memoryMaxBytes(this.memoryLimitBytes);
  }

  /** True once the interrupt handler stopped guest code because the deadline passed. */
  get timedOut(): boolean {
    return this.interrupted;
  }

  /** The memory reached its maximum: even host helpers may fail now; discard, never dispose. */
  get memoryFull(): boolean {
    return this.instance.memory.buffer.byteLength >= this.instance.maxBytes;
  }

  /**
   * Stops guest code for good (the run already failed, e.g. a refused restart-safe call): the
   * interrupt handler answers true from now on, which the guest cannot catch. Not a timeout.
   */
  halt(): void {
    this.halted = true;
  }

  /** A condition that stops guest code like a halt (the pool's abort), checked by the interrupt handler. */
  stopWhen(condition: () => boolean): void {
    this.stopCondition = condition;
  }

  /** Binds the run and the deadline of its current leg (each leg of a resumed run gets its own). */
  bind(sink: VmHostSink, deadline: number): void {
    this.sink = sink;
    this.deadline = deadline;
    this.interrupted = false;
  }

  /** Its wasm memory's current size: what keeping it in a worker's memory holds (SPEC §10 "Parked memory"). */
  memoryBytes(): number {
    return this.instance.memory.buffer.byteLength;
  }

  /**
   * What keeping this VM costs: its non-zero 4 KiB pages of wasm memory × 4096 (SPEC §3), not the
   * raw memory size (at least the binary's ~5.1 MiB of data and stack, mostly untouched zero pages).
   */
  snapshotBytes(): number {
    if (this.released) throw new SandboxEngineError('this sandbox instance was released');
    return nonZeroPageCount(new Uint8Array(this.instance.memory.buffer)) * SCAN_PAGE_BYTES;
  }

  /**
   * Defines the run's catalog globals (and, with a `seed`, the recorded clock and seeded random),
   * compiles the cell and calls it with `this === globalThis`; keeps its promise.
   */
  start(code: string, catalogJson?: string, seed?: number[]): Started {
    this.started = true;
    return this.guard(() => {
      if (seed) installDeterminism(this.ctx, () => this, seed);
      if (catalogJson !== undefined) {
        // Copying a catalog's text into the VM cost more than installing what the image prepared of it.
        const sent = this.prepared ? this.prepared.forGuest(catalogJson) : ({ kind: 'as-is', text: catalogJson } as const);
        const json = sent.kind === 'prepared' ? this.ctx.null : this.ctx.newString(sent.text);
        const named = sent.kind === 'named' ? this.ctx.true : this.ctx.false;
        const defined = this.ctx.callFunction(this.defineCatalogFn, this.ctx.undefined, json, this.ctx.false, named);
        json.dispose();
        if (defined.error) return { ok: false, compile: false, record: this.describeAndDispose(defined.error) };
        defined.value.dispose();
      }
      const compiled = this.ctx.evalCode(CELL_PREFIX + code + CELL_SUFFIX, CELL_FILE);
      if (compiled.error) return { ok: false, compile: true, record: this.describeAndDispose(compiled.error) };
      const called = this.ctx.callFunction(compiled.value, this.ctx.global);
      compiled.value.dispose();
      if (called.error) return { ok: false, compile: false, record: this.describeAndDispose(called.error) };
      this.resultPromise = called.value;
      return { ok: true };
    });
  }

  /**
   * Runs queued jobs in bounded batches until none is left or the deadline passes. Returns true
   * when the VM went idle (no job left), false when it was still busy at the deadline.
   */
  pump(batch: number): boolean {
    return this.guard(() => {
      while (!this.deadlinePassed()) {
        const result = this.runtime.executePendingJobs(batch);
        if (result.error) {
          result.error.dispose();
          continue;
        }
        if (result.value < batch) return true;
      }
      return !this.runtime.hasPendingJob();
    });
  }

  /** A rejected bridge call the guest never attached a handler to (SPEC §3: it fails the cell). */
  readUnhandledRejection(): GuestErrorRecord | undefined {
    return this.guard(() => {
      const result = this.ctx.callFunction(this.unhandledFn, this.ctx.undefined);
      if (result.error) return this.describeAndDispose(result.error);
      const json = this.takeString(result.value);
      return json === undefined ? undefined : parseGuestErrorRecord(json);
    });
  }

  promiseState(): PromiseStateName {
    return this.guard(() => {
      const state = this.ctx.getPromiseState(this.promise());
      if (state.type === 'fulfilled' && !state.notAPromise) state.value.dispose();
      if (state.type === 'rejected') state.error.dispose();
      return state.type;
    });
  }

  /** Serializes the fulfilled value inside the guest with the captured JSON.stringify. */
  readValue(): { ok: true; json: string } | { ok: false; record: GuestErrorRecord } {
    return this.guard(() => {
      const state = this.ctx.getPromiseState(this.promise());
      if (state.type !== 'fulfilled') throw new SandboxEngineError('cell promise is not fulfilled');
      const result = this.ctx.callFunction(this.serializeFn, this.ctx.undefined, state.value);
      if (!state.notAPromise) state.value.dispose();
      if (result.error) return { ok: false, record: this.describeAndDispose(result.error) };
      const json = this.takeString(result.value);
      return json === undefined ? { ok: true, json: 'null' } : { ok: true, json };
    });
  }

  readRejection(): GuestErrorRecord {
    return this.guard(() => {
      const state = this.ctx.getPromiseState(this.promise());
      if (state.type !== 'rejected') throw new SandboxEngineError('cell promise is not rejected');
      return this.describeAndDispose(state.error);
    });
  }

  /** Settles a bridge request in the guest. Returns what a timer callback threw, if it did. */
  settle(id: string, ok: boolean, payloadJson: string): GuestErrorRecord | undefined {
    return this.guard(() => {
      const idHandle = this.ctx.newString(id);
      const payloadHandle = this.ctx.newString(payloadJson);
      const okHandle = ok ? this.ctx.true : this.ctx.false;
      const result = this.ctx.callFunction(this.settleFn, this.ctx.undefined, idHandle, okHandle, payloadHandle);
      idHandle.dispose();
      payloadHandle.dispose();
      if (result.error) return this.describeAndDispose(result.error);
      const thrown = this.takeString(result.value);
      return thrown === undefined ? undefined : parseGuestErrorRecord(thrown);
    });
  }

  /**
   * Ends this VM. A healthy one is disposed in the debug build (which checks for leaks then), only
   * dropped in the release build (its Memory is zero-filled before it serves again: a teardown,
   * ~0.3 ms, is wasted); its instance is recycled. One whose memory is full or whose host side
   * failed is only dropped, its instance left to the garbage collector. Returns the dispose failure, if any.
   */
  release(): unknown {
    if (this.released) return undefined;
    this.sink = undefined;
    if (this.broken || this.memoryFull) {
      this.released = true;
      return undefined;
    }
    if (this.loader.checksLeaks) {
      try {
        this.resultPromise?.dispose();
        for (const handle of this.handles) handle.dispose();
        this.ctx.dispose();
        this.runtime.dispose();
      } catch (error) {
        this.broken = true;
        this.released = true;
        return error;
      }
    }
    // Never called again (guard refuses; disposed cleanly in the debug build): its instance may serve
    // another run, whose Memory the loader zero-fills first.
    this.released = true;
    this.loader.recycle(this.instance);
    return undefined;
  }

  /** This run's limits: QuickJS stack, memory limit below the 16 MiB floor, interrupt handler. */
  private applyLimits(): void {
    this.runtime.setMaxStackSize(QUICKJS_MAX_STACK_BYTES);
    this.runtime.setMemoryLimit(this.memoryLimitBytes < MIN_MEMORY_BYTES ? this.memoryLimitBytes : -1);
    this.runtime.setInterruptHandler(() => this.shouldInterrupt());
  }

  /** The prelude's functions the host keeps (`KEPT_PRELUDE_FUNCTIONS`, in that order). */
  private adoptHandles(handles: QuickJSHandle[]): void {
    [this.settleFn, this.serializeFn, this.describeFn, this.unhandledFn, this.defineCatalogFn] = handles;
    this.handles.push(...handles);
  }

  private shouldInterrupt(): boolean {
    if (this.deadlinePassed()) this.interrupted = true;
    return this.interrupted || this.halted || this.stopCondition();
  }

  private deadlinePassed(): boolean {
    return performance.now() >= this.deadline;
  }

  private promise(): QuickJSHandle {
    if (!this.resultPromise) throw new SandboxEngineError('the cell has not started');
    return this.resultPromise;
  }

  /** Reads a guest string result and disposes it; undefined when it is not a string. */
  private takeString(handle: QuickJSHandle): string | undefined {
    const text = this.ctx.typeof(handle) === 'string' ? this.ctx.getString(handle) : undefined;
    handle.dispose();
    return text;
  }

  private describeAndDispose(thrown: QuickJSHandle): GuestErrorRecord {
    const result = this.ctx.callFunction(this.describeFn, this.ctx.undefined, thrown);
    thrown.dispose();
    if (result.error) {
      result.error.dispose();
      return this.memoryFull ? { name: 'InternalError', message: 'out of memory' } : { text: '[unreadable error]' };
    }
    const json = this.takeString(result.value);
    return json === undefined ? { text: '[unreadable error]' } : parseGuestErrorRecord(json);
  }

  /** The run bound to this VM, for its host functions. */
  get boundSink(): VmHostSink | undefined {
    return this.sink;
  }

  private guard<T>(operation: () => T): T {
    if (this.broken || this.released) throw new SandboxEngineError('this sandbox instance was discarded');
    try {
      return operation();
    } catch (error) {
      if (error instanceof SandboxEngineError) throw error;
      this.broken = true;
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new SandboxEngineError(message, { cause: error });
    }
  }
}

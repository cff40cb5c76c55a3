import './wasm-globals';
import { readFile } from 'node:fs/promises';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import type { SandboxVariant } from './types';

export const WASM_PAGE_BYTES = 64 * 1024;
/** quickjs-emscripten's floor: its builds refuse a Memory below 256 pages (16 MiB, 5 MiB stack included). */
export const MIN_MEMORY_BYTES = 16 * 1024 * 1024;
/** Maximum of the instance a thread prepares ahead of time: the default `memoryLimitBytes`. */
export const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
/** The debug build runs LeakSanitizer inside the instance and needs far more room (tests only). */
const DEBUG_MEMORY_FLOOR_BYTES = 512 * 1024 * 1024;

/** A QuickJS module instance with its own linear memory: used by exactly one run. */
export interface WasmInstance {
  module: QuickJSWASMModule;
  memory: WebAssembly.Memory;
  maxBytes: number;
}

/** Wasm memory maximum for a run: max(limit, 16 MiB), rounded up to whole pages. */
export function memoryMaxBytes(memoryLimitBytes: number): number {
  const bytes = Math.max(memoryLimitBytes, MIN_MEMORY_BYTES);
  return Math.ceil(bytes / WASM_PAGE_BYTES) * WASM_PAGE_BYTES;
}

/**
 * Compiles the variant's wasm once (per thread) and builds fresh instances from it, each with a
 * new `WebAssembly.Memory` whose maximum is the run's hard memory cap.
 */
export class WasmLoader {
  private constructor(
    private readonly variant: QuickJSSyncVariant,
    private readonly compiled: WebAssembly.Module,
    private readonly floorBytes: number,
  ) {}

  static async load(which: SandboxVariant): Promise<WasmLoader> {
    const variant = await loadVariant(which);
    const wasmPath =
      which === 'debug'
        ? require.resolve('@jitl/quickjs-wasmfile-debug-sync/wasm')
        : require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
    const compiled = await WebAssembly.compile(await readFile(wasmPath));
    return new WasmLoader(variant, compiled, which === 'debug' ? DEBUG_MEMORY_FLOOR_BYTES : 0);
  }

  async instantiate(requestedMaxBytes: number): Promise<WasmInstance> {
    const maxBytes = Math.max(requestedMaxBytes, this.floorBytes);
    const memory = new WebAssembly.Memory({ initial: 256, maximum: maxBytes / WASM_PAGE_BYTES });
    const variant = newVariant(this.variant, { wasmModule: this.compiled, wasmMemory: memory });
    const module = await newQuickJSWASMModuleFromVariant(variant);
    return { module, memory, maxBytes };
  }
}

async function loadVariant(which: SandboxVariant): Promise<QuickJSSyncVariant> {
  if (which === 'debug') return (await import('@jitl/quickjs-wasmfile-debug-sync')).default;
  return (await import('@jitl/quickjs-wasmfile-release-sync')).default;
}

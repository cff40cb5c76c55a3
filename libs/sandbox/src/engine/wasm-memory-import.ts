import { SandboxEngineError } from '../errors';

const IMPORT_SECTION = 2;
const GLOBAL_SECTION = 6;
const MEMORY_IMPORT = 2;
const I32_CONST = 0x41;

/** Where a wasm binary declares its imported memory's minimum, and how small its static layout lets it be. */
export interface MemoryImportLayout {
  /** Byte offset of the minimum's LEB128 in the binary, and its encoded length. */
  minimumAt: number;
  minimumLength: number;
  /** The minimum the binary declares, in 64 KiB pages. */
  declaredPages: number;
  /**
   * The initial stack pointer (global 0, emscripten's `__stack_pointer`): data, then the stack
   * below it, then the heap from it. A memory smaller than this cannot hold the module's own layout.
   */
  stackTop: number;
}

/**
 * Reads the imported memory's declared minimum and the initial stack pointer of an emscripten
 * wasm binary. quickjs-emscripten's builds declare 256 pages (16 MiB) though their data and stack
 * end at ~5.1 MiB: the rest is heap the allocator can just as well get by growing the memory.
 */
export function readMemoryImportLayout(binary: Uint8Array): MemoryImportLayout {
  const reader = new WasmReader(binary, 8);
  let minimum: { at: number; length: number; pages: number } | undefined;
  let stackTop: number | undefined;
  while (!reader.done) {
    const id = reader.byte();
    const size = reader.u32();
    const end = reader.at + size;
    if (id === IMPORT_SECTION) minimum = findMemoryMinimum(reader);
    if (id === GLOBAL_SECTION) stackTop = readFirstGlobal(reader);
    reader.at = end;
  }
  if (!minimum || stackTop === undefined) throw new SandboxEngineError('the wasm binary has no imported memory or no stack pointer');
  return { minimumAt: minimum.at, minimumLength: minimum.length, declaredPages: minimum.pages, stackTop };
}

/**
 * A copy of the binary whose imported memory declares `pages` as its minimum (rewritten in place,
 * as a padded LEB128 of the same length). Nothing else changes: the maximum stays the Memory's own.
 */
export function withMemoryMinimum(binary: Uint8Array, layout: MemoryImportLayout, pages: number): Uint8Array {
  if (pages < 1 || pages >= 2 ** (7 * layout.minimumLength)) {
    throw new SandboxEngineError(`cannot declare ${pages} pages in a ${layout.minimumLength}-byte minimum`);
  }
  const patched = Uint8Array.from(binary);
  for (let i = 0; i < layout.minimumLength; i += 1) {
    const last = i === layout.minimumLength - 1;
    patched[layout.minimumAt + i] = ((pages >>> (7 * i)) & 0x7f) | (last ? 0 : 0x80);
  }
  return patched;
}

function findMemoryMinimum(reader: WasmReader): { at: number; length: number; pages: number } | undefined {
  const count = reader.u32();
  for (let i = 0; i < count; i += 1) {
    reader.skipName();
    reader.skipName();
    const kind = reader.byte();
    if (kind === MEMORY_IMPORT) {
      reader.byte(); // limits flags
      const at = reader.at;
      const pages = reader.u32();
      return { at, length: reader.at - at, pages };
    }
    if (kind === 0) reader.u32();
    else if (kind === 1) skipTableType(reader);
    else if (kind === 3) reader.at += 2;
    else throw new SandboxEngineError(`unknown wasm import kind ${kind}`);
  }
  return undefined;
}

function skipTableType(reader: WasmReader): void {
  reader.byte();
  const flags = reader.byte();
  reader.u32();
  if (flags & 1) reader.u32();
}

function readFirstGlobal(reader: WasmReader): number {
  if (reader.u32() === 0) throw new SandboxEngineError('the wasm binary has no globals');
  reader.at += 2; // value type, mutability
  if (reader.byte() !== I32_CONST) throw new SandboxEngineError('the wasm stack pointer is not an i32 constant');
  return reader.u32();
}

class WasmReader {
  constructor(
    private readonly bytes: Uint8Array,
    public at: number,
  ) {}

  get done(): boolean {
    return this.at >= this.bytes.length;
  }

  byte(): number {
    return this.bytes[this.at++];
  }

  /** An unsigned LEB128 (for the stack pointer's i32.const: positive addresses below 2^31 read the same). */
  u32(): number {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = this.byte();
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  }

  skipName(): void {
    const length = this.u32();
    this.at += length;
  }
}

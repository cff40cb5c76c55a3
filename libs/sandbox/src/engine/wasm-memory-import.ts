import { SandboxEngineError } from '../errors';

const IMPORT_SECTION = 2;
const GLOBAL_SECTION = 6;
const EXPORT_SECTION = 7;
const CODE_SECTION = 10;
const FUNCTION_KIND = 0;
const MEMORY_IMPORT = 2;
const GLOBAL_KIND = 3;
const I32_CONST = 0x41;
const I32_TYPE = 0x7f;
const MUTABLE = 1;
const GLOBAL_GET = 0x23;
const END = 0x0b;

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
  /**
   * The export whose whole body reads the stack pointer (`global.get` of it, nothing else:
   * emscripten's `emscripten_stack_get_current`, under a minified name), if the binary has one.
   */
  stackPointerReader: string | undefined;
}

/**
 * Reads the imported memory's declared minimum and the initial stack pointer of an emscripten
 * wasm binary. quickjs-emscripten's builds declare 256 pages (16 MiB) though their data and stack
 * end at ~5.1 MiB: the rest is heap the allocator can just as well get by growing the memory.
 */
export function readMemoryImportLayout(binary: Uint8Array): MemoryImportLayout {
  const reader = new WasmReader(binary, 8);
  let imports: Imports = { minimum: undefined, functions: 0, globals: 0 };
  let stackPointer: FirstGlobal | undefined;
  let exportedFunctions = new Map<number, string>();
  let readerIndex: number | undefined;
  while (!reader.done) {
    const id = reader.byte();
    const size = reader.u32();
    const end = reader.at + size;
    if (id === IMPORT_SECTION) imports = readImports(reader);
    if (id === GLOBAL_SECTION) stackPointer = readFirstGlobal(reader);
    if (id === EXPORT_SECTION) exportedFunctions = readExportedFunctions(reader);
    // The first defined global is the stack pointer (global 0 when none is imported).
    if (id === CODE_SECTION) readerIndex = findGlobalReader(reader, imports.globals, imports.functions, exportedFunctions);
    reader.at = end;
  }
  const minimum = imports.minimum;
  if (!minimum || stackPointer === undefined) throw new SandboxEngineError('the wasm binary has no imported memory or no stack pointer');
  // A reader counts only where the first defined global can be nothing but the stack pointer:
  // no global is imported (the stack pointer could be that one) and it is a mutable i32.
  const stackPointerReader =
    imports.globals === 0 && stackPointer.mutableI32 && readerIndex !== undefined ? exportedFunctions.get(readerIndex) : undefined;
  return {
    minimumAt: minimum.at,
    minimumLength: minimum.length,
    declaredPages: minimum.pages,
    stackTop: stackPointer.value,
    stackPointerReader,
  };
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

interface Imports {
  minimum: { at: number; length: number; pages: number } | undefined;
  /** Imported functions and globals: they come first in their index spaces. */
  functions: number;
  globals: number;
}

function readImports(reader: WasmReader): Imports {
  const imports: Imports = { minimum: undefined, functions: 0, globals: 0 };
  const count = reader.u32();
  for (let i = 0; i < count; i += 1) {
    reader.skipName();
    reader.skipName();
    const kind = reader.byte();
    if (kind === MEMORY_IMPORT) {
      const flags = reader.byte();
      const at = reader.at;
      const pages = reader.u32();
      imports.minimum ??= { at, length: reader.at - at, pages };
      if (flags & 1) reader.u32();
    } else if (kind === FUNCTION_KIND) {
      reader.u32();
      imports.functions += 1;
    } else if (kind === 1) skipTableType(reader);
    else if (kind === GLOBAL_KIND) {
      reader.at += 2;
      imports.globals += 1;
    } else throw new SandboxEngineError(`unknown wasm import kind ${kind}`);
  }
  return imports;
}

/** Function index → export name. */
function readExportedFunctions(reader: WasmReader): Map<number, string> {
  const functions = new Map<number, string>();
  const count = reader.u32();
  for (let i = 0; i < count; i += 1) {
    const name = reader.name();
    const kind = reader.byte();
    const index = reader.u32();
    if (kind === FUNCTION_KIND) functions.set(index, name);
  }
  return functions;
}

/** The index of the one exported function whose body is `global.get global; end` with no locals, if exactly one. */
function findGlobalReader(
  reader: WasmReader,
  global: number,
  importedFunctions: number,
  exported: Map<number, string>,
): number | undefined {
  const found: number[] = [];
  const count = reader.u32();
  for (let i = 0; i < count; i += 1) {
    const size = reader.u32();
    const end = reader.at + size;
    const index = importedFunctions + i;
    if (exported.has(index) && reader.byte() === 0 && reader.byte() === GLOBAL_GET && reader.u32() === global && reader.byte() === END) {
      if (reader.at === end) found.push(index);
    }
    reader.at = end;
  }
  return found.length === 1 ? found[0] : undefined;
}

function skipTableType(reader: WasmReader): void {
  reader.byte();
  const flags = reader.byte();
  reader.u32();
  if (flags & 1) reader.u32();
}

interface FirstGlobal {
  value: number;
  mutableI32: boolean;
}

function readFirstGlobal(reader: WasmReader): FirstGlobal {
  if (reader.u32() === 0) throw new SandboxEngineError('the wasm binary has no globals');
  const type = reader.byte();
  const mutability = reader.byte();
  const mutableI32 = type === I32_TYPE && mutability === MUTABLE;
  if (reader.byte() !== I32_CONST) throw new SandboxEngineError('the wasm stack pointer is not an i32 constant');
  return { value: reader.u32(), mutableI32 };
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
    if (this.at >= this.bytes.length) throw new SandboxEngineError('the wasm binary ends early');
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

  name(): string {
    const length = this.u32();
    const text = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.at, length).toString('utf8');
    this.at += length;
    return text;
  }
}

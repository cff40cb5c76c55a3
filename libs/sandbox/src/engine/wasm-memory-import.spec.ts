import { readFileSync } from 'node:fs';
import './wasm-globals';
import { readMemoryImportLayout, withMemoryMinimum } from './wasm-memory-import';

const binary = readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm'));

describe('the wasm memory import of the release build', () => {
  const layout = readMemoryImportLayout(binary);

  it('reads the declared 256 pages and a stack pointer between 5 and 6 MiB', () => {
    expect(layout.declaredPages).toBe(256);
    expect(layout.stackTop).toBeGreaterThan(5 * 1024 * 1024);
    expect(layout.stackTop).toBeLessThan(6 * 1024 * 1024);
  });

  it('lowers the minimum in place and changes nothing else', async () => {
    const patched = withMemoryMinimum(binary, layout, 82);
    expect(readMemoryImportLayout(patched)).toEqual({ ...layout, declaredPages: 82 });
    const changed = [...patched.keys()].filter((i) => patched[i] !== binary[i]);
    expect(changed.every((i) => i >= layout.minimumAt && i < layout.minimumAt + layout.minimumLength)).toBe(true);
    await expect(WebAssembly.compile(patched)).resolves.toBeInstanceOf(WebAssembly.Module);
  });

  it('finds the export that reads the stack pointer', () => {
    // emscripten's minified name in the pinned build: a new build must be looked at again.
    expect(layout.stackPointerReader).toBe('Oa');
  });

  it('refuses a minimum its encoded length cannot hold', () => {
    expect(() => withMemoryMinimum(binary, layout, 0)).toThrow('cannot declare 0 pages');
    expect(() => withMemoryMinimum(binary, layout, 2 ** 14)).toThrow('cannot declare 16384 pages');
  });
});

/**
 * A small wasm binary: an imported memory, maybe an imported function and an imported global, one
 * global (a mutable i32 unless `constantGlobal`), functions () -> i32 with these bodies (indexes
 * after the imported function), exported under these names.
 */
function wasmBinary(options: {
  importedFunction?: boolean;
  importedGlobal?: boolean;
  constantGlobal?: boolean;
  bodies: number[][];
  exports: [name: string, fn: number][];
}): Uint8Array {
  const leb = (value: number): number[] => {
    const out: number[] = [];
    do {
      const low = value & 0x7f;
      value >>>= 7;
      out.push(value ? low | 0x80 : low);
    } while (value);
    return out;
  };
  const text = (name: string): number[] => [...leb(name.length), ...Buffer.from(name)];
  const vec = (items: number[][]): number[] => [...leb(items.length), ...items.flat()];
  const section = (id: number, bytes: number[]): number[] => [id, ...leb(bytes.length), ...bytes];
  const imports = [[...text('env'), ...text('memory'), 2, 0, 1]];
  if (options.importedFunction) imports.push([...text('env'), ...text('f'), 0, 0]);
  if (options.importedGlobal) imports.push([...text('env'), ...text('base'), 3, 0x7f, 0]);
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([[0x60, 0, 1, 0x7f]])),
    ...section(2, vec(imports)),
    ...section(3, vec(options.bodies.map(() => [0]))),
    ...section(6, vec([[0x7f, options.constantGlobal ? 0 : 1, 0x41, 0x80, 0x20, 0x0b]])),
    ...section(7, vec(options.exports.map(([name, fn]) => [...text(name), 0, ...leb(fn)]))),
    ...section(10, vec(options.bodies.map((body) => [...leb(body.length), ...body]))),
  ]);
}

describe("the stack pointer's reader", () => {
  const readsGlobal = (global: number): number[] => [0, 0x23, global, 0x0b];
  const constant = [0, 0x41, 5, 0x0b];
  const compiles = (binary: Uint8Array): Promise<void> => expect(WebAssembly.compile(binary)).resolves.toBeInstanceOf(WebAssembly.Module);

  it('is the one exported function whose whole body reads the first defined global (one not exported does not count)', async () => {
    const binary = wasmBinary({
      bodies: [constant, readsGlobal(0), readsGlobal(0)],
      exports: [
        ['a', 0],
        ['b', 1],
      ],
    });
    await compiles(binary);
    expect(readMemoryImportLayout(binary)).toMatchObject({ stackTop: 4096, stackPointerReader: 'b' });
  });

  it('counts imported functions before the defined ones', async () => {
    const binary = wasmBinary({
      importedFunction: true,
      bodies: [readsGlobal(0), constant],
      exports: [
        ['reader', 1],
        ['other', 2],
      ],
    });
    await compiles(binary);
    expect(readMemoryImportLayout(binary).stackPointerReader).toBe('reader');
  });

  it('is none where the first defined global may not be the stack pointer: a global is imported, or it is not a mutable i32', async () => {
    const imported = wasmBinary({ importedGlobal: true, bodies: [readsGlobal(1)], exports: [['own', 0]] });
    const constantGlobal = wasmBinary({ constantGlobal: true, bodies: [readsGlobal(0)], exports: [['a', 0]] });
    for (const binary of [imported, constantGlobal]) {
      await compiles(binary);
      expect(readMemoryImportLayout(binary).stackPointerReader).toBeUndefined();
    }
  });

  it('is none when two exported functions read it, or the body does more', async () => {
    const twice = wasmBinary({
      bodies: [readsGlobal(0), readsGlobal(0)],
      exports: [
        ['a', 0],
        ['b', 1],
      ],
    });
    const more = wasmBinary({ bodies: [[0, 0x23, 0, 0x1a, 0x23, 0, 0x0b]], exports: [['a', 0]] });
    for (const binary of [twice, more]) {
      await compiles(binary);
      expect(readMemoryImportLayout(binary).stackPointerReader).toBeUndefined();
    }
  });

  it('refuses a binary that ends early', () => {
    const binary = wasmBinary({ bodies: [readsGlobal(0)], exports: [['a', 0]] });
    expect(() => readMemoryImportLayout(binary.subarray(0, binary.length - 3))).toThrow('the wasm binary ends early');
  });
});

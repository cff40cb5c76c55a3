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
    expect(layout.stackPointerReader).toEqual(expect.any(String));
  });

  it('refuses a minimum its encoded length cannot hold', () => {
    expect(() => withMemoryMinimum(binary, layout, 0)).toThrow('cannot declare 0 pages');
    expect(() => withMemoryMinimum(binary, layout, 2 ** 14)).toThrow('cannot declare 16384 pages');
  });
});

/** A small wasm binary: an imported memory, maybe an imported global, one i32 global, functions () -> i32 with these bodies, exported under these names. */
function wasmBinary(options: { importedGlobal: boolean; bodies: number[][]; exports: [name: string, fn: number][] }): Uint8Array {
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
  if (options.importedGlobal) imports.push([...text('env'), ...text('base'), 3, 0x7f, 0]);
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([[0x60, 0, 1, 0x7f]])),
    ...section(2, vec(imports)),
    ...section(3, vec(options.bodies.map(() => [0]))),
    ...section(6, vec([[0x7f, 1, 0x41, 0x80, 0x20, 0x0b]])),
    ...section(7, vec(options.exports.map(([name, fn]) => [...text(name), 0, ...leb(fn)]))),
    ...section(10, vec(options.bodies.map((body) => [...leb(body.length), ...body]))),
  ]);
}

describe("the stack pointer's reader", () => {
  const readsGlobal = (global: number): number[] => [0, 0x23, global, 0x0b];
  const constant = [0, 0x41, 5, 0x0b];

  it('is the one exported function whose whole body reads the first defined global', async () => {
    const binary = wasmBinary({
      importedGlobal: false,
      bodies: [constant, readsGlobal(0)],
      exports: [
        ['a', 0],
        ['b', 1],
      ],
    });
    await expect(WebAssembly.compile(binary)).resolves.toBeInstanceOf(WebAssembly.Module);
    expect(readMemoryImportLayout(binary)).toMatchObject({ stackTop: 4096, stackPointerReader: 'b' });
  });

  it('counts imported globals and functions before the defined ones', async () => {
    const binary = wasmBinary({
      importedGlobal: true,
      bodies: [readsGlobal(0), readsGlobal(1)],
      exports: [
        ['imported', 0],
        ['own', 1],
      ],
    });
    await expect(WebAssembly.compile(binary)).resolves.toBeInstanceOf(WebAssembly.Module);
    expect(readMemoryImportLayout(binary).stackPointerReader).toBe('own');
  });

  it('is none when two functions read it, when the body does more, or when it is not exported', async () => {
    const twice = wasmBinary({
      importedGlobal: false,
      bodies: [readsGlobal(0), readsGlobal(0)],
      exports: [
        ['a', 0],
        ['b', 1],
      ],
    });
    const more = wasmBinary({ importedGlobal: false, bodies: [[0, 0x23, 0, 0x1a, 0x23, 0, 0x0b]], exports: [['a', 0]] });
    const hidden = wasmBinary({ importedGlobal: false, bodies: [readsGlobal(0)], exports: [] });
    for (const binary of [twice, more, hidden]) {
      await expect(WebAssembly.compile(binary)).resolves.toBeInstanceOf(WebAssembly.Module);
      expect(readMemoryImportLayout(binary).stackPointerReader).toBeUndefined();
    }
  });
});

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

  it('refuses a minimum its encoded length cannot hold', () => {
    expect(() => withMemoryMinimum(binary, layout, 0)).toThrow('cannot declare 0 pages');
    expect(() => withMemoryMinimum(binary, layout, 2 ** 14)).toThrow('cannot declare 16384 pages');
  });
});

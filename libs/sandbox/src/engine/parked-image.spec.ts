import { brotliCompressSync } from 'node:zlib';
import {
  checkBinding,
  decodeParkedImage,
  encodeParkedImage,
  GUEST_PRELUDE_VERSION,
  PARKED_IMAGE_VERSION,
  ParkedImageMismatchError,
  type ParkedRunState,
} from './parked-image';
import type { VmImage } from './vm-image';

const WASM = 'a'.repeat(64);
const binding = { wasmHash: WASM, preludeVersion: GUEST_PRELUDE_VERSION };

function vmImage(): VmImage {
  const bytes = new Uint8Array(3 * 4096);
  bytes.fill(7, 0, 4096);
  bytes.fill(9, 8192);
  return {
    wasmHash: WASM,
    memoryPages: 256,
    runs: Uint32Array.from([0, 2, 10, 1]),
    bytes,
    runtimePointer: 1000,
    contextPointer: 2000,
    globalPointer: undefined,
    scratchPointer: 3000,
    handlePointers: [4000, 4008],
    hostRefIds: [-2147483648, -2147483647, -2147483646],
    randomStateOffset: 512,
  };
}

const state: ParkedRunState = {
  ledger: { calls: [['bridge:sleep:1', 'sleep', '[500]', false, false, 0]], counters: [['sleep', 1]], toolCalls: 0 },
  timers: [['bridge:sleep:1', 1_700_000_000_000]],
  dispatched: true,
  output: { bytes: 12, consoleUsed: 30, consoleTruncated: false },
  seeded: false,
};

describe('parked run image envelope (SPEC §12)', () => {
  it('round-trips the VM pages, pointers and host state, compressed', () => {
    const image = vmImage();
    const encoded = encodeParkedImage('cm_1', image, state);
    expect(encoded.subarray(0, 4).toString('ascii')).toBe('CMPI');
    expect(encoded[4]).toBe(PARKED_IMAGE_VERSION);
    expect(encoded.length).toBeLessThan(image.bytes.length / 4);
    const decoded = decodeParkedImage(encoded, 'cm_1', binding);
    expect(decoded.run).toEqual(state);
    expect(decoded.vm).toEqual({ ...image, globalPointer: undefined });
    expect(Buffer.from(decoded.vm.bytes).equals(Buffer.from(image.bytes))).toBe(true);
  });

  it('refuses another run’s image, another wasm binary, another prelude version, another envelope version and foreign bytes', () => {
    const encoded = encodeParkedImage('cm_1', vmImage(), state);
    expect(() => decodeParkedImage(encoded, 'cm_1', { ...binding, wasmHash: 'b'.repeat(64) })).toThrow(ParkedImageMismatchError);
    expect(() => decodeParkedImage(encoded, 'cm_2', binding)).toThrow("parked run image of run cm_1 is not run cm_2's");
    expect(() => decodeParkedImage(encoded, 'cm_1', { ...binding, preludeVersion: 'older' })).toThrow(/prelude/);
    const otherVersion = Buffer.from(encoded);
    otherVersion[4] = PARKED_IMAGE_VERSION + 1;
    expect(() => decodeParkedImage(otherVersion, 'cm_1', binding)).toThrow(/version/);
    expect(() => decodeParkedImage(Buffer.from('not an image'), 'cm_1', binding)).toThrow(ParkedImageMismatchError);
    const garbage = Buffer.concat([encoded.subarray(0, 5), brotliCompressSync(Buffer.from('xx'))]);
    expect(() => decodeParkedImage(garbage, 'cm_1', binding)).toThrow(/does not decode/);
  });

  it('checks a binding without decoding (what a worker reads beside the bytes)', () => {
    expect(() => checkBinding(binding, binding)).not.toThrow();
    expect(() => checkBinding({ ...binding, wasmHash: '0'.repeat(64) }, binding)).toThrow(/is not for wasm/);
  });
});

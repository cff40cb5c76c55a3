import * as vm from 'node:vm';
import { TEXT_CODEC_SOURCE } from './text-codec';

interface GuestCodec {
  encode: (text: string) => number[];
  decode: (bytes: number[], options?: { fatal?: boolean; ignoreBOM?: boolean }) => string;
  decodeStream: (chunks: number[][]) => string;
  context: vm.Context;
}

/** Name of what `run` throws; errors from another realm fail `instanceof` checks. */
function thrownName(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).name;
  }
  return 'nothing thrown';
}

/** Installs the codec in a fresh realm, as QuickJS would, and exposes plain-array helpers. */
function guestCodec(): GuestCodec {
  const context = vm.createContext({});
  vm.runInContext(TEXT_CODEC_SOURCE, context);
  const helpers = vm.runInContext(
    `({
      encode: (text) => Array.from(new TextEncoder().encode(text)),
      decode: (bytes, options) => new TextDecoder('utf-8', options).decode(new Uint8Array(bytes)),
      decodeStream: (chunks) => {
        const decoder = new TextDecoder();
        let out = '';
        for (const chunk of chunks) out += decoder.decode(new Uint8Array(chunk), { stream: true });
        return out + decoder.decode();
      },
    })`,
    context,
  ) as Omit<GuestCodec, 'context'>;
  return { ...helpers, context };
}

const STRINGS = [
  '',
  'hello',
  'héllo wörld',
  '漢字かな交じり文',
  '🦞 lobster 🎉 party 👨‍👩‍👧',
  '\u0000\u007f\u0080\u07ff\u0800\uffff',
  '\ud800',
  'a\udc00b',
  '\udbff\udfff',
  '\ud83e',
  '\ud83e\ud83e\udd9e',
  '\ufeffBOM first',
  'x'.repeat(10_000) + '🦞'.repeat(3000),
];

const INVALID_BYTES: number[][] = [
  [0xff],
  [0x80],
  [0xc0, 0x80],
  [0xc2],
  [0xe2, 0x82],
  [0xe2, 0x28, 0xa1],
  [0xed, 0xa0, 0x80],
  [0xf0, 0x9f, 0xa6],
  [0xf0, 0x9f, 0xa6, 0x9e, 0xf0],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5, 0x80],
  [0x61, 0xe0, 0x80, 0x62],
  [0xef, 0xbb, 0xbf, 0x61],
  [0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf],
];

describe('TEXT_CODEC_SOURCE', () => {
  const codec = guestCodec();
  const nodeEncoder = new TextEncoder();

  it('installs non-enumerable, writable, configurable globals', () => {
    const descriptors = vm.runInContext(
      `[Object.getOwnPropertyDescriptor(globalThis, 'TextEncoder'), Object.getOwnPropertyDescriptor(globalThis, 'TextDecoder')]`,
      codec.context,
    ) as PropertyDescriptor[];
    for (const descriptor of descriptors) {
      expect(descriptor).toMatchObject({ enumerable: false, writable: true, configurable: true });
    }
    expect(vm.runInContext(`new TextEncoder().encoding + ' ' + new TextDecoder().encoding`, codec.context)).toBe('utf-8 utf-8');
  });

  it.each(STRINGS.map((text) => [JSON.stringify(text).slice(0, 40), text]))('encodes %s like Node', (_name, text) => {
    expect(codec.encode(text)).toEqual(Array.from(nodeEncoder.encode(text)));
  });

  it.each(STRINGS.map((text) => [JSON.stringify(text).slice(0, 40), text]))('round-trips %s like Node', (_name, text) => {
    const bytes = Array.from(nodeEncoder.encode(text));
    expect(codec.decode(bytes)).toBe(new TextDecoder().decode(new Uint8Array(bytes)));
    expect(codec.decode(bytes, { ignoreBOM: true })).toBe(new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array(bytes)));
  });

  it.each(INVALID_BYTES.map((bytes) => [bytes.map((b) => b.toString(16)).join(' '), bytes]))(
    'decodes invalid %s with the same replacements as Node',
    (_name, bytes) => {
      expect(codec.decode(bytes)).toBe(new TextDecoder().decode(new Uint8Array(bytes)));
    },
  );

  it('throws TypeError in fatal mode on malformed input only', () => {
    expect(() => codec.decode([0xff], { fatal: true })).toThrow('The encoded data was not valid for encoding utf-8');
    expect(thrownName(() => codec.decode([0xe2, 0x82], { fatal: true }))).toBe('TypeError');
    expect(codec.decode([0xe2, 0x82, 0xac], { fatal: true })).toBe('€');
  });

  it('keeps incomplete sequences across streamed chunks and drops the BOM once', () => {
    const bytes = Array.from(nodeEncoder.encode('\ufeff🦞é\ufeffx'));
    const chunks = bytes.map((byte) => [byte]);
    expect(codec.decodeStream(chunks)).toBe('🦞é\ufeffx');
    expect(codec.decodeStream([[0xf0, 0x9f], [0xa6]])).toBe('\ufffd');
  });

  it('accepts ArrayBuffer, DataView and offset views', () => {
    const result = vm.runInContext(
      `(() => {
        const bytes = new TextEncoder().encode('xx🦞yy');
        const decoder = new TextDecoder('UTF8');
        return [
          decoder.decode(bytes.buffer),
          decoder.decode(new DataView(bytes.buffer, 2, 4)),
          decoder.decode(bytes.subarray(2, 6)),
          decoder.decode(),
        ];
      })()`,
      codec.context,
    ) as string[];
    expect(result).toEqual(['xx🦞yy', '🦞', '🦞', '']);
  });

  it('rejects unsupported labels and non-buffer input', () => {
    expect(thrownName(() => vm.runInContext(`new TextDecoder('latin1')`, codec.context))).toBe('RangeError');
    expect(thrownName(() => vm.runInContext(`new TextDecoder().decode('abc')`, codec.context))).toBe('TypeError');
    expect(vm.runInContext(`new TextDecoder(' Unicode-1-1-UTF-8 ').encoding`, codec.context)).toBe('utf-8');
  });

  it('encodeInto stops before a code point that does not fit', () => {
    const result = vm.runInContext(
      `(() => { const target = new Uint8Array(5); const r = new TextEncoder().encodeInto('a🦞b', target); return [r.read, r.written, Array.from(target)]; })()`,
      codec.context,
    ) as [number, number, number[]];
    const nodeTarget = new Uint8Array(5);
    const nodeResult = nodeEncoder.encodeInto('a🦞b', nodeTarget);
    expect(result).toEqual([nodeResult.read, nodeResult.written, Array.from(nodeTarget)]);
  });

  it('keeps working after the guest replaces Uint8Array and String.fromCharCode', () => {
    const text = vm.runInContext(
      `(() => {
        const bytes = new TextEncoder().encode('ok 🦞');
        String.fromCharCode = () => 'forged';
        globalThis.Uint8Array = function () { throw new Error('replaced'); };
        return new TextDecoder().decode(bytes) + '|' + new TextEncoder().encode('é').length;
      })()`,
      codec.context,
    ) as string;
    expect(text).toBe('ok 🦞|2');
  });
});

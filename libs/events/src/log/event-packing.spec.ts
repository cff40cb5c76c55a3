import { deflateRawSync } from 'node:zlib';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { StoreCommandError } from '../platform/errors';
import { completed } from '../test-support';
import { PACK_MAX_BYTES, PACKED_PREFIX, packEventData, splicedEventData, unpackEventData } from './event-packing';

const REQUEST = splicedEventData(
  JSON.stringify({
    restartSafe: false,
    awaitResults: false,
    limits: SPEC_DEFAULT_LIMITS,
  }),
  [
    ['title', JSON.stringify('add')],
    ['code', JSON.stringify('return 1+1')],
    ['requestId', JSON.stringify('de8d835b-9b26-411c-96cf-3143874dd962')],
  ],
);

describe('event data packing', () => {
  test('splices raws as append.lua does: after the head, in order, none after an empty head comma', () => {
    expect(splicedEventData('{"a":1}', [])).toBe('{"a":1}');
    expect(splicedEventData('{}', [['result', '{"x":[]}']])).toBe('{"result":{"x":[]}}');
    expect(
      splicedEventData('{"a":1}', [
        ['title', '"t"'],
        ['code', '"c"'],
      ]),
    ).toBe('{"a":1,"title":"t","code":"c"}');
  });

  test('a run request packs to a fraction of its text and unpacks to the same text', () => {
    const packed = packEventData(REQUEST);
    expect(packed?.startsWith(PACKED_PREFIX)).toBe(true);
    expect(packed!.length).toBeLessThan(REQUEST.length / 3);
    expect(unpackEventData(packed!)).toBe(REQUEST);
  });

  test('text the JSON of a cell can hold comes back byte for byte', () => {
    const value = ['\ud800 lone', '€ 😀 漢字', 2 ** 53 + 2, '\u2028', -0, 1e-7];
    const text = JSON.stringify({ result: completed(value) });
    const packed = packEventData(text);
    expect(packed).toBeDefined();
    expect(unpackEventData(packed!)).toBe(text);
  });

  test('data is kept as it is where packing does not pay, and past the size bound', () => {
    expect(packEventData('{}')).toBeUndefined();
    const large = JSON.stringify({ result: { value: 'x'.repeat(PACK_MAX_BYTES) } });
    expect(packEventData(large)).toBeUndefined();
    expect(unpackEventData(large)).toBe(large);
  });

  test('a packed entry that would unpack past the bound, or is not deflate, is a store error', () => {
    const bomb = PACKED_PREFIX + deflateRawSync('a'.repeat(PACK_MAX_BYTES * 4)).toString('base64');
    expect(() => unpackEventData(bomb)).toThrow(StoreCommandError);
    expect(() => unpackEventData(`${PACKED_PREFIX}not deflate`)).toThrow(StoreCommandError);
  });
});

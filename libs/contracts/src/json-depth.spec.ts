import { BODY_TOO_DEEP_ERROR, jsonNestsDeeperThan, MAX_JSON_DEPTH, VALUE_TOO_DEEP_ERROR } from './json-depth';

const deep = (levels: number, open = '[', close = ']'): string => open.repeat(levels) + close.repeat(levels);
/** The verdict on the UTF-8 bytes, checked to be the same on the string itself. */
const nests = (text: string, max?: number): boolean => {
  const verdict = jsonNestsDeeperThan(Buffer.from(text, 'utf8'), max);
  expect(jsonNestsDeeperThan(text, max)).toBe(verdict);
  return verdict;
};

describe('jsonNestsDeeperThan', () => {
  it('accepts exactly 128 levels and refuses 129, arrays and objects alike', () => {
    expect(MAX_JSON_DEPTH).toBe(128);
    expect(nests(deep(128))).toBe(false);
    expect(nests(deep(129))).toBe(true);
    const objects = (levels: number): string => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
    expect(nests(objects(128))).toBe(false);
    expect(nests(objects(129))).toBe(true);
    const mixed = (levels: number): string => '[{"k":'.repeat(levels / 2) + 'null' + '}]'.repeat(levels / 2);
    expect(nests(mixed(128))).toBe(false);
    expect(nests(mixed(130))).toBe(true);
  });

  it('counts depth, not brackets: siblings at one level never add up', () => {
    expect(nests(`[${Array.from({ length: 10_000 }, () => '[]').join(',')}]`)).toBe(false);
    expect(nests(`{"a":${deep(127)},"b":${deep(127)}}`)).toBe(false);
    expect(nests(`{"a":${deep(127)},"b":${deep(128)}}`)).toBe(true);
  });

  it('ignores brackets inside strings, keys included', () => {
    expect(nests(JSON.stringify({ code: '['.repeat(5000), '{{{{': '[[[[' }))).toBe(false);
    expect(nests(JSON.stringify(['{'.repeat(5000)]))).toBe(false);
  });

  it('reads escapes: an escaped quote does not end the string, an escaped backslash does not escape the quote', () => {
    expect(nests(JSON.stringify({ s: `\\"${'['.repeat(300)}` }))).toBe(false);
    expect(nests(JSON.stringify({ s: '\\' }) + deep(129))).toBe(true);
    // `"\\"` is a one-backslash string: the brackets after it are outside any string.
    expect(nests(`["\\\\",${deep(128)}]`)).toBe(true);
    expect(nests(`["\\u005b\\"[[[",${deep(127)}]`)).toBe(false);
    expect(nests(`["\\\\\\"[",${deep(127)}]`)).toBe(false);
    expect(nests(`["\\\\\\\\",${deep(128)}]`)).toBe(true);
  });

  it('is not fooled by multi-byte UTF-8 around brackets', () => {
    expect(nests(JSON.stringify({ 'é[': '€]"['.repeat(200), emoji: '😀'.repeat(10) }))).toBe(false);
    expect(nests(`["é€😀",${deep(128)}]`)).toBe(true);
  });

  it('takes the bound as an argument and leaves invalid JSON to the parser', () => {
    expect(nests(deep(3), 2)).toBe(true);
    expect(nests(deep(2), 2)).toBe(false);
    expect(nests(']]]]' + deep(128))).toBe(false);
    expect(nests('"unterminated [[[[')).toBe(false);
    expect(nests('')).toBe(false);
  });

  it('scans 5,000 levels without recursion', () => {
    expect(nests(deep(5000))).toBe(true);
    expect(nests(deep(1_000_000))).toBe(true);
  });

  it('names the SPEC messages', () => {
    expect(BODY_TOO_DEEP_ERROR).toBe('request body nests deeper than 128 levels.');
    expect(VALUE_TOO_DEEP_ERROR).toBe('value nests deeper than 128 levels.');
  });
});

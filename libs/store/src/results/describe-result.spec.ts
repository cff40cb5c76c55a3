import { MAX_DESCRIPTOR_BYTES } from '../limits';
import { describeResult } from './describe-result';

const ID = 'result_00000000-0000-4000-8000-000000000000';
const describe_ = (value: unknown) => describeResult(ID, JSON.stringify(value), value);
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('describeResult', () => {
  test('count and shape per type; small values are previewed whole', () => {
    expect(describe_([1, 2, 3])).toEqual({
      id: ID,
      bytes: 7,
      count: 3,
      shape: 'array[3] of number',
      preview: '[1,2,3]',
      previewTruncated: false,
    });
    expect(describe_({ a: 1, b: 'x', c: [true] })).toMatchObject({
      count: 3,
      shape: 'object {"a":number,"b":string,"c":array}; $.c: array[1] of boolean',
      preview: '{"a":1,"b":"x","c":[true]}',
      previewTruncated: false,
    });
    expect(describe_('text')).toMatchObject({ count: 1, shape: 'string', preview: '"text"' });
    expect(describe_(42)).toMatchObject({ count: 1, shape: 'number', bytes: 2 });
    expect(describe_(false)).toMatchObject({ count: 1, shape: 'boolean' });
    expect(describe_(null)).toMatchObject({ count: 1, shape: 'null', preview: 'null' });
    expect(describe_([])).toMatchObject({ count: 0, shape: 'array[0]', preview: '[]' });
    expect(describe_({})).toMatchObject({ count: 0, shape: 'object {}' });
  });

  test('a big nested value: ≤ 768 bytes, identity whole, bounded preview prefix', () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({
      id: i,
      name: `row "${i}" \\ ${'é'.repeat(20)}`,
      tags: ['a', 'b'],
      nested: { deeper: { items: Array.from({ length: i % 7 }, () => ({ v: '\ud800' })) } },
      ['k'.repeat(100)]: null,
    }));
    const value = { ok: true, total: rows.length, rows, meta: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, [i]])) };
    const json = JSON.stringify(value);
    const d = describeResult(ID, json, value);
    expect(bytesOf(d)).toBeLessThanOrEqual(MAX_DESCRIPTOR_BYTES);
    expect(d).toMatchObject({ id: ID, bytes: Buffer.byteLength(json), count: 4, previewTruncated: true });
    expect(d.shape.startsWith('object {"ok":boolean,"total":number,"rows":array,"meta":object}')).toBe(true);
    expect(d.shape).toContain('$.rows: array[5000] of');
    expect(json.startsWith(d.preview)).toBe(true);
    expect(d.preview.length).toBeGreaterThan(50);
  });

  test('escaping-heavy and multi-byte values still fit; arrays of arrays', () => {
    for (const value of [
      '"'.repeat(120),
      ['\\'.repeat(200)],
      '\u0001'.repeat(80),
      '😀'.repeat(2000),
      [[[[[[1]]]]]],
      { ['"'.repeat(5000)]: '\\'.repeat(5000) },
    ]) {
      const d = describe_(value);
      expect(bytesOf(d)).toBeLessThanOrEqual(MAX_DESCRIPTOR_BYTES);
      expect(d.id).toBe(ID);
      if (!d.previewTruncated) expect(d.preview).toBe(JSON.stringify(value));
      else expect(JSON.stringify(value).startsWith(d.preview)).toBe(true);
    }
  });
});

import { StoreCapacityError, StoreError, StoreKeyError, StoreValueNotSerializableError, StoreValueTooLargeError } from './errors';
import { MAX_STORE_BYTES, MAX_STORE_VALUE_BYTES } from './limits';
import { StoreBuffer } from './store-buffer';

const KEY_MESSAGE = 'Code Mode store key must be a non-empty string of at most 256 characters.';
const VALUE_MESSAGE = 'Code Mode store value exceeds 256 KiB of serialized JSON.';
const FULL_MESSAGE = 'Code Mode store exceeds 1 MiB of serialized JSON; delete keys or store less data.';

/** A string value whose JSON (quotes included) is exactly `bytes` bytes. */
const valueOfBytes = (bytes: number): string => 'x'.repeat(bytes - 2);

function expectRefused(op: () => void, cls: new (...args: never[]) => StoreError, name: string, message: string): void {
  let caught: unknown;
  try {
    op();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(cls);
  expect(caught).toBeInstanceOf(StoreError);
  expect(caught).toMatchObject({ name, message });
}

describe('StoreBuffer', () => {
  test('keys: non-empty strings of at most 256 UTF-16 units', () => {
    const buffer = new StoreBuffer(new Map());
    for (const key of ['', 'k'.repeat(257), 1, null, undefined, {}, Symbol('s')]) {
      expectRefused(() => buffer.set(key, 1), StoreKeyError, 'TypeError', KEY_MESSAGE);
      expectRefused(() => buffer.get(key), StoreKeyError, 'TypeError', KEY_MESSAGE);
    }
    buffer.set('k'.repeat(256), 1);
    buffer.set('😀'.repeat(128), 2); // 256 UTF-16 units
    expect(buffer.get('k'.repeat(256))).toEqual({ found: true, value: 1 });
    expectRefused(() => buffer.set('😀'.repeat(128) + 'x', 1), StoreKeyError, 'TypeError', KEY_MESSAGE);
  });

  test('a value of exactly 256 KiB is kept; one byte more is a RangeError', () => {
    const buffer = new StoreBuffer(new Map());
    buffer.set('a', valueOfBytes(MAX_STORE_VALUE_BYTES));
    expect(buffer.totalBytes).toBe(MAX_STORE_VALUE_BYTES);
    expectRefused(() => buffer.set('b', valueOfBytes(MAX_STORE_VALUE_BYTES + 1)), StoreValueTooLargeError, 'RangeError', VALUE_MESSAGE);
    // Multi-byte characters count as UTF-8: 'é' is 2 bytes.
    expectRefused(() => buffer.set('c', 'é'.repeat(MAX_STORE_VALUE_BYTES / 2)), StoreValueTooLargeError, 'RangeError', VALUE_MESSAGE);
  });

  test('the whole store may hold exactly 1 MiB of values; one byte more is a RangeError', () => {
    const buffer = new StoreBuffer(new Map());
    for (const key of ['a', 'b', 'c']) buffer.set(key, valueOfBytes(MAX_STORE_VALUE_BYTES));
    buffer.set('d', valueOfBytes(MAX_STORE_VALUE_BYTES - 1));
    expect(buffer.totalBytes).toBe(MAX_STORE_BYTES - 1);
    buffer.set('e', 7); // "7": 1 byte; keys are not counted
    expect(buffer.totalBytes).toBe(MAX_STORE_BYTES);
    expectRefused(() => buffer.set('f', 8), StoreCapacityError, 'RangeError', FULL_MESSAGE);
    // Replacing a value counts only the difference.
    buffer.set('e', 9);
    expectRefused(() => buffer.set('e', 10), StoreCapacityError, 'RangeError', FULL_MESSAGE);
  });

  test('capacity counts the committed snapshot overlaid with the buffered writes', () => {
    const committed = new Map([
      ['a', JSON.stringify(valueOfBytes(MAX_STORE_VALUE_BYTES))],
      ['b', JSON.stringify(valueOfBytes(MAX_STORE_VALUE_BYTES))],
      ['c', JSON.stringify(valueOfBytes(MAX_STORE_VALUE_BYTES))],
      ['d', JSON.stringify(valueOfBytes(MAX_STORE_VALUE_BYTES))],
    ]);
    const buffer = new StoreBuffer(committed);
    expect(buffer.totalBytes).toBe(MAX_STORE_BYTES);
    expectRefused(() => buffer.set('e', 1), StoreCapacityError, 'RangeError', FULL_MESSAGE);
    buffer.set('a', undefined);
    buffer.set('e', valueOfBytes(MAX_STORE_VALUE_BYTES));
    expect(buffer.writes()).toEqual(
      new Map([
        ['a', null],
        ['e', JSON.stringify(valueOfBytes(MAX_STORE_VALUE_BYTES))],
      ]),
    );
  });

  test('a refused write leaves the buffer unchanged', () => {
    const buffer = new StoreBuffer(new Map([['kept', '"old"']]));
    buffer.set('kept', 'new');
    buffer.set('big', valueOfBytes(MAX_STORE_VALUE_BYTES));
    const before = { writes: buffer.writes(), total: buffer.totalBytes };
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expectRefused(() => buffer.set('kept', valueOfBytes(MAX_STORE_VALUE_BYTES + 1)), StoreValueTooLargeError, 'RangeError', VALUE_MESSAGE);
    expectRefused(
      () => buffer.set('kept', cycle),
      StoreValueNotSerializableError,
      'TypeError',
      expect.stringContaining('JSON-serializable') as never,
    );
    expectRefused(
      () => buffer.set('kept', { n: 1n }),
      StoreValueNotSerializableError,
      'TypeError',
      expect.stringContaining('BigInt') as never,
    );
    for (const key of ['b', 'c']) buffer.set(key, valueOfBytes(MAX_STORE_VALUE_BYTES));
    buffer.set('d', valueOfBytes(MAX_STORE_VALUE_BYTES - 100));
    const full = { writes: buffer.writes(), total: buffer.totalBytes };
    expectRefused(() => buffer.set('kept', valueOfBytes(1000)), StoreCapacityError, 'RangeError', FULL_MESSAGE);
    expect(buffer.writes()).toEqual(full.writes);
    expect(buffer.totalBytes).toBe(full.total);
    expect(buffer.get('kept')).toEqual({ found: true, value: 'new' });
    expect(before.writes.get('kept')).toBe('"new"');
  });

  test('undefined deletes, null is kept, load sees own writes over the snapshot', () => {
    const buffer = new StoreBuffer(
      new Map([
        ['a', '1'],
        ['b', '2'],
      ]),
    );
    expect(buffer.get('a')).toEqual({ found: true, value: 1 });
    expect(buffer.get('missing')).toEqual({ found: false });
    buffer.set('a', undefined);
    buffer.set('b', null);
    buffer.set('c', { x: [1, 'two'] });
    expect(buffer.get('a')).toEqual({ found: false });
    expect(buffer.get('b')).toEqual({ found: true, value: null });
    expect(buffer.get('c')).toEqual({ found: true, value: { x: [1, 'two'] } });
    expect(buffer.writes()).toEqual(
      new Map<string, string | null>([
        ['a', null],
        ['b', 'null'],
        ['c', '{"x":[1,"two"]}'],
      ]),
    );
    expect(buffer.totalBytes).toBe(4 + 15);
    expect(buffer.dirty).toBe(true);
    expect(new StoreBuffer(new Map()).dirty).toBe(false);
  });

  test('values are detached copies, in and out', () => {
    const snapshot = new Map([['s', '{"n":1}']]);
    const buffer = new StoreBuffer(snapshot);
    snapshot.set('s', '{"n":2}');
    expect(buffer.get('s')).toEqual({ found: true, value: { n: 1 } });

    const value = { list: [1, 2], date: new Date(0), skip: undefined, fn: () => 1 };
    buffer.set('v', value);
    value.list.push(3);
    const first = buffer.get('v');
    expect(first).toEqual({ found: true, value: { list: [1, 2], date: '1970-01-01T00:00:00.000Z' } });
    if (first.found) (first.value as { list: number[] }).list.push(99);
    expect(buffer.get('v')).toEqual({ found: true, value: { list: [1, 2], date: '1970-01-01T00:00:00.000Z' } });
    const writes = buffer.writes();
    writes.clear();
    expect(buffer.writes().size).toBe(1);
  });

  test('JSON texts keep lone surrogates and large numbers exactly', () => {
    const buffer = new StoreBuffer(new Map());
    buffer.set('\ud800key', { s: 'a\ud800b', n: 2 ** 53 + 2, f: 0.1 });
    expect(buffer.writes().get('\ud800key')).toBe('{"s":"a\\ud800b","n":9007199254740994,"f":0.1}');
    expect(buffer.get('\ud800key')).toEqual({ found: true, value: { s: 'a\ud800b', n: 2 ** 53 + 2, f: 0.1 } });
  });
});

import { boundError } from './bound-error';
import { boundOutput } from './bound-output';
import { OUTPUT_TRUNCATED_TEXT } from './truncation-text';
import { safePrefix } from './utf8-json';

describe('boundError', () => {
  it.each([
    { name: 'fits whole', error: 'short', limit: 7, expected: 'short' },
    { name: 'keeps whole lone surrogates that fit', error: '\ud800x', limit: 20, expected: '\ud800x' },
    {
      name: 'replaces lone surrogates in a cut prefix',
      error: '\ud800'.repeat(6),
      limit: 30,
      expected: '\ufffd'.repeat(3) + ' [error truncated]',
    },
    { name: 'never splits an emoji', error: '🦞'.repeat(10), limit: 2 + 18 + 7, expected: '🦞 [error truncated]' },
    { name: 'keeps the suffix when nothing else fits', error: 'x'.repeat(50), limit: 5, expected: ' [error truncated]' },
    { name: 'counts JSON escapes', error: '"'.repeat(50), limit: 2 + 18 + 9, expected: '""""' + ' [error truncated]' },
  ])('$name', ({ error, limit, expected }) => {
    expect(boundError(error, limit)).toBe(expected);
  });
});

describe('boundOutput', () => {
  const entry = { type: 'text' as const, text: 'abc' }; // 28 bytes
  it.each([
    { limit: 2 + 28 * 3 + 2, kept: 3, truncated: false, bytes: 88 },
    { limit: 87, kept: 1, truncated: true, bytes: 2 + 29 + 43 },
    { limit: 73, kept: 0, truncated: true, bytes: 45 },
    { limit: 44, kept: 0, truncated: true, bytes: 0 },
  ])('limit $limit keeps $kept entries', ({ limit, kept, truncated, bytes }) => {
    const bounded = boundOutput([entry, entry, entry], limit);
    expect(bounded.truncated).toBe(truncated);
    expect(bounded.bytes).toBe(bytes);
    expect(bounded.bytes).toBe(bounded.entries.length ? Buffer.byteLength(JSON.stringify(bounded.entries)) : 0);
    const marker = truncated && bytes > 0 ? [{ type: 'text', text: OUTPUT_TRUNCATED_TEXT }] : [];
    expect(bounded.entries).toEqual([...Array<typeof entry>(kept).fill(entry), ...marker]);
  });
});

describe('safePrefix', () => {
  it('backs off instead of splitting a surrogate pair', () => {
    expect(safePrefix('a🦞b', 2)).toBe('a');
    expect(safePrefix('a🦞b', 3)).toBe('a🦞');
  });
});

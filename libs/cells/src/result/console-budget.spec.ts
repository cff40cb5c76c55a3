import { CONSOLE_CAP_UNITS, CONSOLE_TRUNCATED_TEXT, ConsoleBudget } from './console-budget';

/** Cost of one entry: `{"type":"text","text":"…"}` is 25 units plus the escaped text. */
const ENTRY_OVERHEAD = JSON.stringify({ type: 'text', text: '' }).length;

describe('ConsoleBudget', () => {
  it('has the SPEC cap and entry overhead', () => {
    expect(CONSOLE_CAP_UNITS).toBe(16384);
    expect(ENTRY_OVERHEAD).toBe(25);
  });

  it('cuts at the exact entry that would pass 16384 units, once, and ignores later calls', () => {
    const budget = new ConsoleBudget();
    const text = 'x'.repeat(1000); // 1025 units each: 15 fit (15375), the 16th would reach 16400
    const results = Array.from({ length: 20 }, () => budget.accept(text));
    results.slice(0, 15).forEach((entries) => expect(entries).toEqual([{ type: 'text', text }]));
    expect(results[15]).toEqual([{ type: 'text', text: CONSOLE_TRUNCATED_TEXT }]);
    results.slice(16).forEach((entries) => expect(entries).toEqual([]));
    expect(budget.truncated).toBe(true);
    expect(budget.used).toBe(15 * 1025);
  });

  it.each([
    { name: 'an entry landing exactly on the cap is kept', last: 'y'.repeat(16384 - 15375 - 25), kept: true },
    { name: 'one unit more is cut', last: 'y'.repeat(16384 - 15375 - 25 + 1), kept: false },
    { name: 'escapes count as serialized', last: '"'.repeat(505), kept: false },
    { name: 'escapes that still fit', last: '"'.repeat(492), kept: true },
  ])('$name', ({ last, kept }) => {
    const budget = new ConsoleBudget();
    for (let i = 0; i < 15; i += 1) budget.accept('x'.repeat(1000));
    const entries = budget.accept(last);
    expect(entries).toEqual([{ type: 'text', text: kept ? last : CONSOLE_TRUNCATED_TEXT }]);
    expect(budget.truncated).toBe(!kept);
  });

  it('counts UTF-16 units, so an emoji costs 2', () => {
    const budget = new ConsoleBudget();
    budget.accept('🦞');
    expect(budget.used).toBe(ENTRY_OVERHEAD + 2);
  });
});

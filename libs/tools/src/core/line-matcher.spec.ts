import { createLineMatcher, type LineMatcher } from './line-matcher';
import { PATTERN_MATCH_BUDGET_MS } from './limits';
import { MatchBudget } from './match-budget';

/** A line of `a`s and `b`s without period, so RE2's DFA cannot cache its way through it. */
function aperiodicLine(length: number): string {
  const chars: string[] = [];
  let seed = 1;
  for (let index = 0; index < length; index += 1) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    chars.push(seed & 0x10000 ? 'a' : 'b');
  }
  return chars.join('');
}

/** 0-based indexes of the first `maxMatches` matching lines of `text`. */
async function matchingLines(matcher: LineMatcher, text: string, maxMatches: number): Promise<number[]> {
  const found = await matcher.search(new Uint8Array(Buffer.from(text, 'utf8')), {
    maxMatches,
    context: 0,
    maxBytes: Number.MAX_SAFE_INTEGER,
  });
  return found.map((line) => line.index);
}

describe('createLineMatcher', () => {
  let matcher: LineMatcher | undefined;
  const create = async (pattern: string, options: { ignoreCase?: boolean; literal?: boolean } = {}, budget = new MatchBudget()) => {
    matcher = await createLineMatcher(pattern, options, budget);
    return matcher;
  };
  afterEach(async () => {
    await matcher?.close();
    matcher = undefined;
  });

  it('answers the indexes of matching lines, with ignoreCase and literal', async () => {
    await expect(matchingLines(await create('alpha\\b'), 'alpha\nalphabet\nan alpha.\n', 10)).resolves.toEqual([0, 2]);
    await matcher?.close();
    await expect(matchingLines(await create('ALPHA', { ignoreCase: true }), 'x\nAlpha\n', 10)).resolves.toEqual([1]);
    await matcher?.close();
    await expect(matchingLines(await create('(a+b)', { literal: true }), 'aab\n(a+b)\n', 10)).resolves.toEqual([1]);
  });

  it('numbers lines as split on newlines, a final newline ending the last one, up to maxMatches', async () => {
    const anything = await create('^');
    await expect(matchingLines(anything, '', 10)).resolves.toEqual([]);
    await expect(matchingLines(anything, '\n', 10)).resolves.toEqual([0]);
    await expect(matchingLines(anything, 'a\n\nb', 10)).resolves.toEqual([0, 1, 2]);
    await expect(matchingLines(anything, 'a\n\n', 10)).resolves.toEqual([0, 1]);
    await expect(matchingLines(anything, 'a\nb\nc\nd', 2)).resolves.toEqual([0, 1]);
  });

  it('matches a catastrophic-backtracking pattern against a 30 000-character line in linear time', async () => {
    const evil = await create('(a+)+$');
    await expect(matchingLines(evil, `${'a'.repeat(30_000)}b\n${'a'.repeat(30_000)}\n`, 10)).resolves.toEqual([1]);
  });

  it('fails with the SPEC message when matching overruns the budget, stopping the work', async () => {
    const pattern = '(a|b)*a(a|b){1000}$';
    const slow = await create(pattern);
    // Linear, but about 30 µs a character: this one line alone would take seconds.
    await expect(matchingLines(slow, aperiodicLine(400_000), 10)).rejects.toThrow(new Error(`pattern too expensive: ${pattern}`));
    await expect(matchingLines(slow, 'a', 10)).rejects.toThrow(`pattern too expensive: ${pattern}`);
  });

  it('fails with the SPEC message when compiling or preparing the pattern overruns the budget', async () => {
    // A third of the default budget. In one full run under Node 24 a worker of this spec reached its
    // 256 MB heap just as the 1 s budget ran out (V8's trace: 214 MB at 775 ms, 272 MB at 1,098 ms).
    // It then dies of memory instead, with the same answer, but V8 prints that trace to the process's
    // stderr, and Jest reads the text as its own worker running out of memory and fails the file.
    const grepOnce = async (pattern: string) =>
      matchingLines(await create(pattern, {}, new MatchBudget(PATTERN_MATCH_BUDGET_MS / 3)), 'b', 10);
    const slowToCompile = 'x{1,1000}'.repeat(600); // RE2 takes seconds to compile it
    await expect(grepOnce(slowToCompile)).rejects.toThrow(new Error(`pattern too expensive: ${slowToCompile}`));
    const slowFirstMatch = '\\pL{1000}'.repeat(300); // its first match builds a DFA alphabet for seconds
    await expect(grepOnce(slowFirstMatch)).rejects.toThrow(new Error(`pattern too expensive: ${slowFirstMatch}`));
  });

  it('fails with the SPEC message for patterns over RE2 limits or once the budget is spent', async () => {
    const tooLarge = '(?:a{1000}|b{1000}|c{1000}|d{1000}){1000}';
    await expect(create(tooLarge)).rejects.toThrow(new Error(`pattern too expensive: ${tooLarge}`));
    await expect(create('x', {}, new MatchBudget(0))).rejects.toThrow(new Error('pattern too expensive: x'));
  });

  it('explains invalid patterns, naming lookaround and backreferences', async () => {
    await expect(create('(unclosed')).rejects.toMatchObject({
      code: 'invalid_pattern',
      message:
        'grep pattern is not a valid regular expression: missing closing ): `(unclosed`. Pass literal: true to search for the text as written.',
    });
    await expect(create('a(?=b)')).rejects.toThrow(
      'grep pattern is not a valid regular expression: invalid or unsupported Perl syntax: `(?=`; lookaround and backreferences are not supported (RE2 syntax). Pass literal: true to search for the text as written.',
    );
    await expect(create('(a)\\1')).rejects.toThrow(/lookaround and backreferences are not supported/u);
  });
});

import { compileGlob } from './glob';
import { MatchBudget } from './match-budget';

describe('compileGlob', () => {
  it.each([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'deep/dir/a.ts', true],
    ['*.ts', 'a.tsx', false],
    ['**/*.json', 'package.json', true],
    ['**/*.json', 'a/b/c.json', true],
    ['src/**/*.spec.ts', 'src/a.spec.ts', true],
    ['src/**/*.spec.ts', 'src/x/y/a.spec.ts', true],
    ['src/**/*.spec.ts', 'lib/src/a.spec.ts', false],
    ['src/*.ts', 'src/x/a.ts', false],
    ['*.{js,ts}', 'x/a.js', true],
    ['file?.md', 'file1.md', true],
    ['[ab].txt', 'b.txt', true],
    ['[!ab].txt', 'c.txt', true],
    ['[!ab].txt', 'a.txt', false],
    ['a.b', 'axb', false],
    ['./src/*.ts', 'src/a.ts', true],
    ['[[]x].md', '[x].md', true],
    ['[\\]].md', '\\].md', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['{a,b', '{a,b', false],
    ['*.😀', 'x.😀', true],
    ['?.md', '😀.md', true],
  ])('%s matches %s: %s', (pattern, subject, expected) => {
    expect(compileGlob(pattern, new MatchBudget()).matches(subject)).toBe(expected);
  });

  it('matches a glob that makes a backtracking engine explode in linear time', () => {
    const glob = `${'a*'.repeat(14)}b`;
    const name = 'a'.repeat(250);
    expect(compileGlob(glob, new MatchBudget()).matches(name)).toBe(false);
    expect(compileGlob(`**/${glob}`, new MatchBudget()).matches(`${name}/`.repeat(16) + name)).toBe(false);
  });

  it('fails with the SPEC message once the call has spent its matching budget', () => {
    const glob = compileGlob('*.ts', new MatchBudget(0));
    expect(() => glob.matches('a.ts')).toThrow(new Error('pattern too expensive: *.ts'));
  });

  it('refuses globs too long to match cheaply and ones RE2 cannot compile', () => {
    const long = '*'.repeat(513);
    expect(() => compileGlob(long, new MatchBudget())).toThrow(`pattern too expensive: ${long}`);
    expect(() => compileGlob('[z-a].md', new MatchBudget())).toThrow(
      'glob pattern is not valid: [z-a].md (invalid character class range: `z-a`).',
    );
  });
});

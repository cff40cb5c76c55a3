import { compileGlob } from './glob';

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
  ])('%s matches %s: %s', (pattern, subject, expected) => {
    expect(compileGlob(pattern).matches(subject)).toBe(expected);
  });
});

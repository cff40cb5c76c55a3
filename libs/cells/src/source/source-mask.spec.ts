import { maskLiteralsAndComments } from './source-mask';

describe('maskLiteralsAndComments', () => {
  it.each([
    ['string text, keeping the quotes', `x("require('fs')")`, `x("${' '.repeat(13)}")`],
    ['single-quoted text', `x('import("a")')`, `x('           ')`],
    ['regex text and flags, keeping the slashes', 'x(/require\\(/u)', `x(/${' '.repeat(9)}/ )`],
    ['line comments', 'a // require("fs")\nb', `a${' '.repeat(17)}\nb`],
    ['block comments, keeping line breaks', 'a /* x\ny */ b', 'a     \n     b'],
    ['template text but not its expressions', '`a ${require("x")} b`', '`  ${require(" ")}  `'],
    ['an escaped identifier, decoded', '\\u0072equire("fs")', 'require     ("  ")'],
    ['nothing in plain code', 'return a + b;', 'return a + b;'],
  ])('masks %s', (_name, code, expected) => {
    expect(maskLiteralsAndComments(code)).toBe(expected);
  });

  it('keeps every offset where it was', () => {
    const code = 'const a = "x"; // y\nreturn `z${a}`;';
    expect(maskLiteralsAndComments(code)).toHaveLength(code.length);
  });

  it('masks nothing when the tokenizer fails, but still decodes escapes', () => {
    expect(maskLiteralsAndComments('"open ; \\u0072equire("fs")')).toBe('"open ; require("fs")');
  });
});

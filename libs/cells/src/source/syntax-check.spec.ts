import { checkExecInput } from './exec-input';
import { findSyntaxError } from './syntax-check';

describe('findSyntaxError', () => {
  it.each([
    ['const value = ;', 'SyntaxError: Unexpected token (line 1, column 15)'],
    ['let a = 1;\nlet b = ;', 'SyntaxError: Unexpected token (line 2, column 9)'],
    ['let a = 1;\r\nlet b = ;', 'SyntaxError: Unexpected token (line 2, column 9)'],
    ['foo(', 'SyntaxError: Unexpected end of input (line 1, column 5)'],
    ['if (x) {\n  return 1;\n', 'SyntaxError: Unexpected end of input (line 3, column 1)'],
    ['let x = 1;\nlet x = 2;', "SyntaxError: Identifier 'x' has already been declared (line 2, column 5)"],
    ['return "unterminated', 'SyntaxError: Unterminated string constant (line 1, column 8)'],
    ['"use strict"; with (a) {}', "SyntaxError: 'with' in strict mode (line 1, column 15)"],
    ['}); (async function () {', 'SyntaxError: Unexpected token (line 1, column 1)'],
    ['return 1;\n}\n(function () {', 'SyntaxError: Unexpected token (line 2, column 1)'],
    ["export * from 'fs';", "SyntaxError: 'import' and 'export' may only appear at the top level (line 1, column 1)"],
    ['#!/usr/bin/env node', "SyntaxError: Unexpected character '!' (line 1, column 2)"],
  ])('%j → %s', (code, expected) => {
    expect(findSyntaxError(code)).toBe(expected);
  });

  it.each([
    'return 1',
    'await Promise.resolve(1)',
    'for await (const x of xs) {}',
    'with (Math) { return PI; }',
    'return this === globalThis;',
    'return arguments.length;',
    'return new.target;',
    'var yield = 1; return yield;',
    '"use strict"; return 1;',
    'const big = 10n ** 20n; return `${big}`;',
    'class A { #x = 1; static { this.y = 2; } get x() { return this.#x; } }',
    'return a?.b ?? c;',
    'x ||= 1; y &&= 2; z ??= 3;',
    '// a trailing comment',
    'return 1 // no newline at the end',
    'label: for (;;) { break label; }',
  ])('accepts %j', (code) => {
    expect(findSyntaxError(code)).toBeNull();
  });

  it('bounds a message that quotes a huge identifier', () => {
    const name = 'x'.repeat(10_000);
    const error = findSyntaxError(`let ${name};\nlet ${name};`);
    expect(error).toMatch(/^SyntaxError: Identifier 'x+…/u);
    expect(error!.length).toBeLessThan(300);
    expect(error).toMatch(/\(line 2, column 5\)$/u);
  });

  it('does not judge code nested too deeply for the parser', () => {
    const code = `return ${'['.repeat(200_000)}${']'.repeat(200_000)};`;
    expect(findSyntaxError(code)).toBeNull();
  });

  it('exec answers a syntax error that is not shell-shaped as invalid input', () => {
    expect(checkExecInput({ title: 't', code: 'const value = ;' })).toEqual({
      ok: false,
      error: 'SyntaxError: Unexpected token (line 1, column 15)',
    });
    // Names outside the command set are JavaScript, so a broken line of them is a syntax error.
    expect(checkExecInput({ title: 't', code: './gradlew test' })).toEqual({
      ok: false,
      error: 'SyntaxError: Unexpected token (line 1, column 1)',
    });
  });
});

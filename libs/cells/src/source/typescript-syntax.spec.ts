import { checkExecInput } from './exec-input';
import { typeScriptSourceError } from './messages';
import { findSyntaxError } from './syntax-check';
import { findTypeScriptSyntax } from './typescript-syntax';

describe('TypeScript source (SPEC §19)', () => {
  it('spells the sentence exactly', () => {
    expect(typeScriptSourceError('a type annotation', 3)).toBe(
      'code mode accepts plain JavaScript only; remove TypeScript syntax (a type annotation at line 3).',
    );
  });

  it.each([
    ['let x: number = 1;\nreturn x;', 'a type annotation', 1],
    ['const f = (x: number) => x;', 'a type annotation', 1],
    ['function f(a, b): string { return a + b; }', 'a type annotation', 1],
    ['interface Foo { a: string }\nreturn 1;', 'an interface declaration', 1],
    ['const a = 1;\ntype X = string;\nreturn a;', 'a type alias', 2],
    ['const v = input as string;', 'an as cast', 1],
    ['const x = y as const;', 'an as cast', 1],
    ['const c = { a: 1 } satisfies object;', 'a satisfies expression', 1],
    ['const y = <any>x;', 'an angle-bracket type assertion', 1],
    ['const v = input!.name;', 'a non-null assertion', 1],
    ['return x!;', 'a non-null assertion', 1],
    ['class A { constructor(private x) {} }', 'a parameter modifier', 1],
    ['f<string>;', 'a generic type argument', 1],
    ['function f<T>(x) { return x; }', 'a generic type parameter', 1],
    ['enum Color { Red }', 'an enum', 1],
    ['namespace N {}', 'a namespace declaration', 1],
    ['function f(a: string): void;\nfunction f(a) {}', 'a function signature without a body', 1],
    ['const a = 1;\ndeclare const x;', 'a declare modifier', 2],
    ['class A { private x = 1 }', 'an access modifier', 1],
    ['class A { readonly x = 1 }', 'a readonly modifier', 1],
    ['abstract class A {}', 'an abstract modifier', 1],
    ['class B extends A { override m() {} }', 'an override modifier', 1],
    ['class A implements B {}', 'an implements clause', 1],
    ['function f(a?) {}', 'an optional marker', 1],
    ['let x!: number;', 'a definite assignment assertion', 1],
  ])('%j → %s at line %i', (code, what, line) => {
    expect(findSyntaxError(code)).toBe(typeScriptSourceError(what, line));
  });

  it.each([
    ['let a = 1;\n\n\nlet b: string = "";', 'a type annotation', 4],
    ['x = 1;\r\nlet y: number;', 'a type annotation', 2],
    ['const v = (\n  a +\n  b\n) as number;', 'an as cast', 4],
    ['const v = foo(\n  1\n)!;', 'a non-null assertion', 3],
    ['const v = (a /* ) as */\n\n) /* as */ satisfies T;', 'a satisfies expression', 3],
    ['const rows = await api.list();\nconst first = rows[0] as Row;\nlet n: number = 0;', 'an as cast', 2],
    ['// header\n/* block\n */\nfunction g(a, b: number) {\n  return a;\n}', 'a type annotation', 4],
  ])('names the first construct of a multi-line cell on its own line: %j', (code, what, line) => {
    expect(findSyntaxError(code)).toBe(typeScriptSourceError(what, line));
  });

  it.each([
    ['const value = ;', 'SyntaxError: Unexpected token (line 1, column 15)'],
    ['let x: number = ;', 'SyntaxError: Unexpected token (line 1, column 6)'],
    ['let x: number = 1;\n}\n(function () {', 'SyntaxError: Unexpected token (line 1, column 6)'],
    ['foo(', 'SyntaxError: Unexpected end of input (line 1, column 5)'],
  ])('keeps the SyntaxError answer for source that parses as neither: %j', (code, expected) => {
    expect(findSyntaxError(code)).toBe(expected);
  });

  it.each([
    'const a = b ? c : d; return a;',
    'return { x: 1 };',
    'label: { break label; }',
    'return a < b > c;',
    'return f<string>(1);',
    'return a?.b?.(c);',
    'const type = 1, declare = 2, as = 3; return type + declare + as;',
    'let interface = 1; return interface;',
    'return x ? (y) : z;',
    'return a !== b && !c;',
    'return (a) / (b) / (c);',
  ])('runs valid JavaScript that looks like TypeScript: %j', (code) => {
    expect(findSyntaxError(code)).toBeNull();
  });

  it('finds nothing in JavaScript that is broken for TypeScript too', () => {
    expect(findTypeScriptSyntax('const value = ;')).toBeNull();
    expect(findTypeScriptSyntax('}); (function () { let x: number;')).toBeNull();
  });

  it('keeps the shell answer for a cell whose first word is a shell command (SPEC §3 runs first)', () => {
    expect(checkExecInput({ title: 't', code: 'type X = string;' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^code-mode exec runs/u),
    });
  });

  it('exec answers a TypeScript cell with the sentence', () => {
    expect(checkExecInput({ title: 't', code: 'const n: number = 1;\nreturn n;' })).toEqual({
      ok: false,
      error: 'code mode accepts plain JavaScript only; remove TypeScript syntax (a type annotation at line 1).',
    });
  });
});

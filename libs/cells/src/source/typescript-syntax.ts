import { parse, type ParserOptions } from '@babel/parser';

/**
 * Parsed inside the same sloppy async function as the JavaScript check (parse-cell.ts), so
 * `return`, top-level `await`, `arguments` and `new.target` read the same way; the prefix ends
 * with a newline, so line L of the wrapped source is line L-1 of the cell.
 */
const PREFIX = '(async function () {\n';
const SUFFIX = '\n})';

const PARSE_OPTIONS: ParserOptions = { sourceType: 'script', plugins: ['typescript'], errorRecovery: false };

/** What the model wrote that only TypeScript allows, and its 1-based line in the cell. */
export interface TypeScriptFinding {
  what: string;
  line: number;
}

/** The little of a Babel node this module reads; everything else is walked generically. */
interface BabelNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

/** A finding at `offset` in the wrapped source; the earliest one is reported. */
interface Marker {
  what: string;
  offset: number;
}

/** Node types that exist only in TypeScript, named as the sentence names them. */
const TYPESCRIPT_NODES: Readonly<Record<string, string>> = {
  TSTypeAnnotation: 'a type annotation',
  TSInterfaceDeclaration: 'an interface declaration',
  TSTypeAliasDeclaration: 'a type alias',
  TSAsExpression: 'an as cast',
  TSSatisfiesExpression: 'a satisfies expression',
  TSTypeAssertion: 'an angle-bracket type assertion',
  TSNonNullExpression: 'a non-null assertion',
  TSParameterProperty: 'a parameter modifier',
  TSTypeParameterInstantiation: 'a generic type argument',
  TSInstantiationExpression: 'a generic type argument',
  TSTypeParameterDeclaration: 'a generic type parameter',
  TSEnumDeclaration: 'an enum',
  TSModuleDeclaration: 'a namespace declaration',
  TSDeclareFunction: 'a function signature without a body',
  TSDeclareMethod: 'a method signature without a body',
};

/** Named when a TypeScript node type has no entry above. */
const OTHER_TYPESCRIPT = 'a TypeScript-only construct';

/**
 * Flags Babel sets on JavaScript nodes for TypeScript modifiers. `optional` counts on bindings
 * and class members only: Babel also sets it on `a?.b`, which is JavaScript.
 */
const MODIFIER_FLAGS: ReadonlyArray<readonly [flag: string, what: string]> = [
  ['declare', 'a declare modifier'],
  ['accessibility', 'an access modifier'],
  ['abstract', 'an abstract modifier'],
  ['override', 'an override modifier'],
  ['readonly', 'a readonly modifier'],
  ['definite', 'a definite assignment assertion'],
];
const OPTIONAL_MARK_NODES = new Set([
  'Identifier',
  'ObjectPattern',
  'ArrayPattern',
  'ClassProperty',
  'ClassMethod',
  'ClassPrivateProperty',
]);

/**
 * The first TypeScript-only construct of a cell that parses as TypeScript, in source order;
 * null when it does not parse as TypeScript either, escapes the wrapper, or parses with nothing
 * TypeScript-only in it (then it is not TypeScript the model wrote, and §3's `SyntaxError:`
 * stands). Callers run it only after the JavaScript parse failed, so valid JavaScript never
 * reaches it.
 */
export function findTypeScriptSyntax(code: string): TypeScriptFinding | null {
  const source = PREFIX + code + SUFFIX;
  let program: BabelNode;
  try {
    program = parse(source, PARSE_OPTIONS).program as unknown as BabelNode;
  } catch {
    // A syntax error, or a stack overflow on deep nesting: either way not a TypeScript cell.
    return null;
  }
  if (!isSingleWrapper(program, source.length)) return null;
  const first = firstMarker(program, source);
  return first ? { what: first.what, line: lineOf(code, first.offset - PREFIX.length) } : null;
}

/** True when the program is exactly the wrapper function, its body spanning the whole cell. */
function isSingleWrapper(program: BabelNode, sourceLength: number): boolean {
  const body = program.body as BabelNode[];
  const statement = body.length === 1 ? body[0] : undefined;
  const fn = statement?.type === 'ExpressionStatement' ? (statement.expression as BabelNode) : undefined;
  const block = fn?.type === 'FunctionExpression' ? (fn.body as BabelNode) : undefined;
  return block !== undefined && block.start === PREFIX.length - 2 && block.end === sourceLength - 1;
}

/** Walks the whole tree iteratively (a deep tree cannot overflow the stack here). */
function firstMarker(root: BabelNode, source: string): Marker | null {
  let first: Marker | null = null;
  const stack: BabelNode[] = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    const marker = markerOf(node, source);
    if (marker && (!first || marker.offset < first.offset)) first = marker;
    for (const key in node) {
      if (key === 'loc' || key === 'extra' || key.endsWith('Comments')) continue;
      const value = node[key];
      if (Array.isArray(value)) {
        for (const child of value) if (isNode(child)) stack.push(child);
      } else if (isNode(value)) {
        stack.push(value);
      }
    }
  }
  return first;
}

function markerOf(node: BabelNode, source: string): Marker | null {
  if (node.type.startsWith('TS')) return typeScriptNodeMarker(node, source);
  for (const [flag, what] of MODIFIER_FLAGS) {
    if (node[flag] !== undefined && node[flag] !== false) return atStart(node, what);
  }
  if (node.optional === true && OPTIONAL_MARK_NODES.has(node.type)) return atStart(node, 'an optional marker');
  const implemented = node.implements;
  if (Array.isArray(implemented) && isNode(implemented[0])) return atStart(implemented[0], 'an implements clause');
  return null;
}

function typeScriptNodeMarker(node: BabelNode, source: string): Marker | null {
  const what = TYPESCRIPT_NODES[node.type];
  if (what === undefined) return atStart(node, OTHER_TYPESCRIPT);
  switch (node.type) {
    case 'TSAsExpression':
    case 'TSSatisfiesExpression': {
      // The node starts where its expression does, maybe lines before the keyword; the
      // keyword comes after the expression's closing parentheses and any comments.
      return { what, offset: skipToKeyword(source, (node.expression as BabelNode).end) };
    }
    case 'TSNonNullExpression':
      return { what, offset: node.end - 1 };
    default:
      return atStart(node, what);
  }
}

function atStart(node: BabelNode, what: string): Marker {
  return { what, offset: node.start };
}

/** Index of the first character at or after `from` that is not a blank, `)` or a comment. */
function skipToKeyword(source: string, from: number): number {
  let index = from;
  while (index < source.length) {
    if (/\s|\)/u.test(source[index] ?? '')) {
      index += 1;
    } else if (source.startsWith('/*', index)) {
      const close = source.indexOf('*/', index + 2);
      index = close === -1 ? source.length : close + 2;
    } else if (source.startsWith('//', index)) {
      LINE_BREAK.lastIndex = index;
      index = LINE_BREAK.exec(source)?.index ?? source.length;
    } else {
      return index;
    }
  }
  return index;
}

const LINE_BREAK = /\r\n?|[\n\u2028\u2029]/gu;

/** 1-based line of a UTF-16 offset of the cell, counting line breaks as JavaScript does. */
function lineOf(code: string, offset: number): number {
  let line = 1;
  LINE_BREAK.lastIndex = 0;
  for (let match = LINE_BREAK.exec(code); match && match.index < offset; match = LINE_BREAK.exec(code)) line += 1;
  return line;
}

function isNode(value: unknown): value is BabelNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

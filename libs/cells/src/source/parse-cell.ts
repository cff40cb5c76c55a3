import { parse, type Node, type Options, type Program } from 'acorn';

/**
 * A cell is the body of a sloppy-mode async function (SPEC §1), so it is parsed inside one.
 * The prefix ends with a newline: line L of the wrapped source is line L-1 of the cell and
 * columns are unchanged. The suffix starts with a newline so a trailing `//` comment cannot
 * swallow the closing brace.
 */
const PREFIX = '(async function () {\n';
const SUFFIX = '\n})';

const PARSE_OPTIONS: Options = { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: false };

/** 1-based line and column in the cell's own source, as the model wrote it. */
export interface CellSyntaxError {
  message: string;
  line: number;
  column: number;
}

/**
 * `unparseable` is a parser failure that is not a syntax error (acorn recurses, so pathologically
 * deep nesting overflows the stack); callers treat it as "we cannot tell" rather than as an error
 * of the model's code.
 */
export type CellParse = { kind: 'ok'; program: Program } | { kind: 'syntax-error'; error: CellSyntaxError } | { kind: 'unparseable' };

interface AcornSyntaxError {
  name: string;
  message: string;
  pos: number;
}

function isAcornSyntaxError(error: unknown): error is AcornSyntaxError {
  // Duck-typed: under jest the parser and the caller may see different `SyntaxError` realms.
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as Partial<AcornSyntaxError>;
  return candidate.name === 'SyntaxError' && typeof candidate.message === 'string' && typeof candidate.pos === 'number';
}

/** Acorn turns a stack overflow into a SyntaxError; it says nothing about the code's grammar. */
function isStackExhaustion(error: AcornSyntaxError): boolean {
  return error.message.startsWith('Not enough stack space');
}

/** Parses the cell once; every source check (module access, shell shape, syntax) reads this. */
export function parseCell(code: string): CellParse {
  const source = PREFIX + code + SUFFIX;
  let program: Program;
  try {
    program = parse(source, PARSE_OPTIONS);
  } catch (error) {
    if (!isAcornSyntaxError(error) || isStackExhaustion(error)) return { kind: 'unparseable' };
    return { kind: 'syntax-error', error: locateError(code, error) };
  }
  if (!isSingleWrapper(program, source.length)) {
    // The code closed the wrapper and opened code of its own (`}); (function () {`): as a
    // function body that is a stray `}`. Parse it bare to report that error where it is.
    return { kind: 'syntax-error', error: escapedWrapperError(code) };
  }
  return { kind: 'ok', program };
}

/** True when the program is exactly the wrapper function, its body spanning the whole cell. */
function isSingleWrapper(program: Program, sourceLength: number): boolean {
  if (program.body.length !== 1) return false;
  const statement = program.body[0];
  if (statement?.type !== 'ExpressionStatement') return false;
  const fn = statement.expression;
  return fn.type === 'FunctionExpression' && fn.body.start === PREFIX.length - 2 && fn.body.end === sourceLength - 1;
}

/**
 * Where the code breaks when read on its own (a bare program allowing `return` and `await`);
 * null when that parse finds nothing to blame.
 */
function bareSyntaxError(code: string): AcornSyntaxError | null {
  try {
    parse(code, { ...PARSE_OPTIONS, allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true });
  } catch (error) {
    if (isAcornSyntaxError(error) && !isStackExhaustion(error)) return error;
  }
  return null;
}

function escapedWrapperError(code: string): CellSyntaxError {
  const bare = bareSyntaxError(code);
  if (bare && bare.pos < code.length) return positionToLocation(code, bare.pos, cleanMessage(bare.message));
  return { message: "Unexpected token '}'", line: 1, column: 1 };
}

function locateError(code: string, error: AcornSyntaxError): CellSyntaxError {
  const offset = error.pos - PREFIX.length;
  if (offset < code.length) return positionToLocation(code, Math.max(0, offset), cleanMessage(error.message));
  // Acorn blames the wrapper's closing brace. Either the code ended too early (`foo(`), or a
  // stray `}` closed the wrapper and the rest was read as something else: a bare parse tells
  // which, and where.
  const bare = bareSyntaxError(code);
  if (bare && bare.pos < code.length) return positionToLocation(code, bare.pos, cleanMessage(bare.message));
  return positionToLocation(code, code.length, 'Unexpected end of input');
}

/** Acorn appends ` (line:column)` in wrapper coordinates; we report our own position. */
function cleanMessage(message: string): string {
  return message.replace(/ \(\d+:\d+\)$/u, '');
}

const LINE_BREAK = /\r\n?|[\n\u2028\u2029]/gu;

/** Maps a UTF-16 offset of the cell to a 1-based line and column, counting lines as JS does. */
function positionToLocation(code: string, offset: number, message: string): CellSyntaxError {
  let line = 1;
  let lineStart = 0;
  LINE_BREAK.lastIndex = 0;
  for (let match = LINE_BREAK.exec(code); match && match.index < offset; match = LINE_BREAK.exec(code)) {
    line += 1;
    lineStart = match.index + match[0].length;
  }
  return { message, line, column: offset - lineStart + 1 };
}

/**
 * Visits every node of an acorn tree, depth first, until `visit` returns true. Iterative so a
 * deep tree that acorn managed to build cannot overflow the stack here.
 */
export function someNode(root: Node, visit: (node: Node) => boolean): boolean {
  const stack: Node[] = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (visit(node)) return true;
    for (const key in node) {
      const value = (node as unknown as Record<string, unknown>)[key];
      if (Array.isArray(value)) {
        for (const child of value) if (isNode(child)) stack.push(child);
      } else if (isNode(value)) {
        stack.push(value);
      }
    }
  }
  return false;
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

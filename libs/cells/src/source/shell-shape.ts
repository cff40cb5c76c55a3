import type { AnyNode, Pattern, Program } from 'acorn';
import { parseCell, someNode, type CellParse } from './parse-cell';
import { SHELL_COMMAND_NAMES } from './shell-commands';

/**
 * True when the cell is a shell command sent to the JavaScript tool (SPEC §3). The steps run in
 * the SPEC's order; only the last ones need the parse, and only for a known command name.
 * Every scan here is linear: the cell can be 1 MiB and this runs on every exec.
 */
export function isShellShaped(code: string): boolean {
  return looksLikeShell(code, () => parseCell(code));
}

/** {@link isShellShaped} over a parse the caller shares with the other source checks. */
export function looksLikeShell(code: string, parsed: () => CellParse): boolean {
  const trimmed = code.trim();
  if (trimmed.startsWith('#!')) return true;
  const source = trimmed.slice(skipLeadingComments(trimmed));
  if (source === '' || EXPORT_FORM.test(source)) return false;
  if (SHELL_CONTROL.some((pattern) => pattern.test(source))) return true;
  const command = readCommandWord(source, skipEnvAssignments(source));
  if (!command) return false;
  const tail = source.slice(command.end);
  const rest = tail.trimStart();
  if (rest === '') return true;
  const cell = parsed();
  // A known command followed by text that is not JavaScript: nothing else it could be.
  if (cell.kind !== 'ok') return true;
  if (declaresName(cell.program, command.name)) return false;
  if (COMMAND_SEPARATOR.test(tail)) return true;
  return SHELL_ARGUMENT.test(rest) || (command.name === 'jq' && rest.startsWith('.'));
}

/** `export …` in any JavaScript or TypeScript form; `export FOO=bar` is left to the shell. */
const EXPORT_FORM =
  /^export\s+(?:(?:abstract|as|async|class|const|declare|default|enum|function|import|interface|let|namespace|type|var)(?![\w$])|[{*=])/u;

/** Shell control syntax that can never start a JavaScript function body. */
const SHELL_CONTROL: readonly RegExp[] = [
  /^(?:if|elif|while|until)[ \t]+(?:\[\[?(?=[ \t]|$)|test(?![\w-])|[A-Za-z_][\w-]*(?=[ \t;]))/u,
  /^for[ \t]+[A-Za-z_]\w*[ \t]+in(?![\w$])/u,
  /^for[ \t]*\(\([^\r\n]*\)\)[ \t]*(?:;|\r?\n)\s*do(?![\w$])/u,
  /^case[ \t]+\S+[ \t]+in(?![\w$])/u,
  /^function[ \t]+[A-Za-z_][\w-]*[ \t]*\{/u,
];

/** After the command: the next command follows (`;`, newline, `&&`, `||`, `&`, `|`). */
const COMMAND_SEPARATOR = /^[ \t]*[;\r\n&|]/u;

/** A flag (`-x`, `--flag`), a path (`/x`, `./x`, `../x`, `~/x`, `C:\x`) or a redirection. */
const SHELL_ARGUMENT = /^(?:-{1,2}[A-Za-z0-9][\w-]*(?=[\s=;&|]|$)|(?:\.{1,2}[\\/]|~[\\/]|\/|[A-Za-z]:[\\/])\S|\d*(?:>>?|<<?)|&>>?)/u;

const COMMAND_WORD = /(?:\/(?:usr\/(?:local\/)?)?bin\/)?([A-Za-z][\w-]*)(?=$|[\s;&|<>])/uy;

function readCommandWord(source: string, start: number): { name: string; end: number } | null {
  COMMAND_WORD.lastIndex = start;
  const match = COMMAND_WORD.exec(source);
  const name = match?.[1];
  if (name === undefined || !SHELL_COMMAND_NAMES.has(name)) return null;
  return { name, end: COMMAND_WORD.lastIndex };
}

/** Index after any leading `//…`, `/* … *\/` and `#…` comments and the blanks between them. */
function skipLeadingComments(source: string): number {
  let index = 0;
  for (;;) {
    if (source.startsWith('//', index) || source[index] === '#') {
      index = endOfLine(source, index);
    } else if (source.startsWith('/*', index)) {
      const close = source.indexOf('*/', index + 2);
      if (close === -1) return index;
      index = close + 2;
    } else {
      return index;
    }
    while (index < source.length && isBlank(source[index])) index += 1;
  }
}

function endOfLine(source: string, from: number): number {
  for (let index = from; index < source.length; index += 1) {
    if (source[index] === '\n' || source[index] === '\r') return index;
  }
  return source.length;
}

function isBlank(char: string | undefined): boolean {
  return char !== undefined && /\s/u.test(char);
}

const ASSIGNMENT_NAME = /[A-Za-z_]\w*=/uy;

/**
 * Index after leading `NAME=value` words (`NODE_ENV=test npm test`). A value may hold quoted
 * parts and backslash escapes; a word counts only when a blank (or one line break) and more
 * text follow it. An unterminated quote ends the skipping: each character is looked at once.
 */
function skipEnvAssignments(source: string): number {
  let index = 0;
  for (;;) {
    ASSIGNMENT_NAME.lastIndex = index;
    if (!ASSIGNMENT_NAME.test(source)) return index;
    const valueEnd = scanAssignmentValue(source, ASSIGNMENT_NAME.lastIndex);
    const next = valueEnd < 0 ? -1 : skipWordSeparator(source, valueEnd);
    if (next < 0) return index;
    index = next;
  }
}

/** End of a shell word's value, or -1 when a quote never closes. */
function scanAssignmentValue(source: string, start: number): number {
  let index = start;
  while (index < source.length) {
    const char = source[index];
    if (char === '"') {
      let close = index + 1;
      while (close < source.length && source[close] !== '"') close += source[close] === '\\' ? 2 : 1;
      if (close >= source.length) return -1;
      index = close + 1;
    } else if (char === "'") {
      const close = source.indexOf("'", index + 1);
      if (close === -1) return -1;
      index = close + 1;
    } else if (char === '\\' && index + 1 < source.length && !/[\r\n\u2028\u2029]/u.test(source[index + 1] ?? '')) {
      // An escape takes one whole code point (`\😀` is three UTF-16 units).
      index += (source.codePointAt(index + 1) ?? 0) > 0xffff ? 3 : 2;
    } else if (isBlank(char) || char === ';' || char === '&' || char === '|') {
      return index;
    } else {
      index += 1;
    }
  }
  return index;
}

/** Blanks, optionally one line break, blanks; -1 unless something non-blank follows. */
function skipWordSeparator(source: string, start: number): number {
  let index = start;
  while (source[index] === ' ' || source[index] === '\t') index += 1;
  if (source[index] === '\r' && source[index + 1] === '\n') index += 2;
  else if (source[index] === '\n') index += 1;
  while (source[index] === ' ' || source[index] === '\t') index += 1;
  if (index === start || index >= source.length || isBlank(source[index])) return -1;
  return index;
}

/**
 * Whether `name` is declared anywhere by `var`, `let`, `const` (destructuring included) or a
 * function declaration (SPEC §3). Then the first word is the model's own binding, not a command.
 * Parameters, classes and catch bindings are not declarations of a top-level name here.
 */
function declaresName(program: Program, name: string): boolean {
  return someNode(program, (node) => {
    const n = node as AnyNode;
    if (n.type === 'FunctionDeclaration') return n.id?.name === name;
    if (n.type === 'VariableDeclarator') return patternBinds(n.id, name);
    return false;
  });
}

function patternBinds(root: Pattern, name: string): boolean {
  const stack: Pattern[] = [root];
  for (let pattern = stack.pop(); pattern; pattern = stack.pop()) {
    switch (pattern.type) {
      case 'Identifier':
        if (pattern.name === name) return true;
        break;
      case 'ObjectPattern':
        for (const property of pattern.properties) {
          stack.push(property.type === 'RestElement' ? property.argument : property.value);
        }
        break;
      case 'ArrayPattern':
        for (const element of pattern.elements) if (element) stack.push(element);
        break;
      case 'AssignmentPattern':
        stack.push(pattern.left);
        break;
      case 'RestElement':
        stack.push(pattern.argument);
        break;
      default:
        break;
    }
  }
  return false;
}

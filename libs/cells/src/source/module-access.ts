import { parse, type AnyNode, type Node, type Program } from 'acorn';
import { parseCell, someNode, type CellParse } from './parse-cell';
import { maskLiteralsAndComments } from './source-mask';

/**
 * True when the cell tries to load a module (SPEC §3): an `import` declaration,
 * `import(…)`, `import.meta`, or a call of `require` in any spelling that reaches the identifier
 * itself — unicode escapes (acorn decodes them into the node's name), `require?.(…)`,
 * `(0, require)(…)`, parentheses. Member look-alikes (`api.import(1)`, `x.require(1)`,
 * `api["require"]`) and text in strings, regexes and comments are not module access. Neither is
 * a re-export (`export * from "fs"`), which SPEC does not list: it ends as a syntax error.
 */
export function detectModuleAccess(code: string): boolean {
  return hasModuleAccess(code, () => parseCell(code));
}

/** {@link detectModuleAccess} over a parse the caller shares with the other source checks. */
export function hasModuleAccess(code: string, parsed: () => CellParse): boolean {
  // Every spelling contains one of these; an escaped identifier contains `\u`. Most cells have
  // none, and then the tree walk is skipped.
  if (!code.includes('import') && !code.includes('require') && !code.includes('\\u')) return false;
  const cell = parsed();
  if (cell.kind === 'ok') return someNode(cell.program, isModuleAccessNode);
  // An import declaration is only legal at the top of a module, so a function body with one
  // never parses; the module goal can still say exactly what the code does.
  const asModule = code.includes('import') ? parseAsModule(code) : null;
  if (asModule) return someNode(asModule, isModuleAccessNode);
  return matchesModulePattern(maskLiteralsAndComments(code));
}

function parseAsModule(code: string): Program | null {
  try {
    return parse(code, {
      ecmaVersion: 'latest',
      sourceType: 'module',
      allowReturnOutsideFunction: true,
      allowHashBang: true,
    });
  } catch {
    return null;
  }
}

function isModuleAccessNode(node: Node): boolean {
  const n = node as AnyNode;
  switch (n.type) {
    case 'ImportDeclaration':
    case 'ImportExpression':
      return true;
    case 'MetaProperty':
      return n.meta.name === 'import';
    case 'CallExpression':
    case 'NewExpression':
      return reachesRequire(n.callee);
    case 'TaggedTemplateExpression':
      return reachesRequire(n.tag);
    default:
      return false;
  }
}

/** Whether evaluating `callee` can yield the `require` binding itself (not a property of it). */
function reachesRequire(callee: Node): boolean {
  const c = callee as AnyNode;
  switch (c.type) {
    case 'Identifier':
      return c.name === 'require';
    case 'ParenthesizedExpression':
    case 'ChainExpression':
      return reachesRequire(c.expression);
    case 'SequenceExpression': {
      const last = c.expressions[c.expressions.length - 1];
      return last !== undefined && reachesRequire(last);
    }
    case 'ConditionalExpression':
      return reachesRequire(c.consequent) || reachesRequire(c.alternate);
    case 'LogicalExpression':
      return reachesRequire(c.left) || reachesRequire(c.right);
    case 'AssignmentExpression':
      return reachesRequire(c.right);
    default:
      return false;
  }
}

/**
 * Fallback for code that does not parse, over masked source: `import` followed by what an
 * import form needs (`.`, `(`, `*`, `{`, a quote, a name), or `require` called directly,
 * optionally (`?.(`) or through parentheses (`require)(`). Only a single-character lookbehind
 * is used; "is this a property name" is checked by hand so the scan stays linear.
 */
const MODULE_KEYWORD = /(?<![\w$])(?:import(?![\w$])\s*[.(*{"'`\w$]|require(?![\w$])\s*(?:\?\.\s*)?\(|require(?![\w$])\s*\)\s*\()/gu;

function matchesModulePattern(masked: string): boolean {
  MODULE_KEYWORD.lastIndex = 0;
  for (let match = MODULE_KEYWORD.exec(masked); match; match = MODULE_KEYWORD.exec(masked)) {
    if (!isPropertyName(masked, match.index)) return true;
  }
  return false;
}

/** `x.require(`, `x?.import(` and `x . import` name properties; `...require(` is a spread. */
function isPropertyName(source: string, index: number): boolean {
  let before = index - 1;
  while (before >= 0 && /\s/u.test(source[before] ?? '')) before -= 1;
  if (source[before] !== '.') return false;
  return !(source[before - 1] === '.' && source[before - 2] === '.');
}

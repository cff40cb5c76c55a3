import { typeScriptSourceError } from './messages';
import { parseCell, type CellParse } from './parse-cell';
import { findTypeScriptSyntax } from './typescript-syntax';

/** Parser messages can quote a user-sized identifier; the answer stays short. */
const MAX_MESSAGE_CHARS = 240;

/**
 * `SyntaxError: <message> (line L, column C)` for a cell that does not parse as the body of an
 * async function, with L and C 1-based in the cell as written; null when it parses (or is too
 * deeply nested to judge here, which the engine then reports itself). A cell that fails as
 * JavaScript but parses as TypeScript gets SPEC §19's sentence naming what to remove instead.
 */
export function findSyntaxError(code: string): string | null {
  return syntaxErrorOf(code, parseCell(code));
}

/** {@link findSyntaxError} over a parse the caller already has. */
export function syntaxErrorOf(code: string, cell: CellParse): string | null {
  if (cell.kind !== 'syntax-error') return null;
  // Only after JavaScript failed: valid JavaScript is never refused for looking like TypeScript,
  // and the second parse costs nothing on accepted cells.
  const typeScript = findTypeScriptSyntax(code);
  if (typeScript) return typeScriptSourceError(typeScript.what, typeScript.line);
  const { message, line, column } = cell.error;
  const bounded = message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
  return `SyntaxError: ${bounded} (line ${line}, column ${column})`;
}

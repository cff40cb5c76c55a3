import { parseCell, type CellParse } from './parse-cell';

/** Parser messages can quote a user-sized identifier; the answer stays short. */
const MAX_MESSAGE_CHARS = 240;

/**
 * `SyntaxError: <message> (line L, column C)` for a cell that does not parse as the body of an
 * async function, with L and C 1-based in the cell as written; null when it parses (or is too
 * deeply nested to judge here, which the engine then reports itself).
 */
export function findSyntaxError(code: string): string | null {
  return syntaxErrorOf(parseCell(code));
}

/** {@link findSyntaxError} over a parse the caller already has. */
export function syntaxErrorOf(cell: CellParse): string | null {
  if (cell.kind !== 'syntax-error') return null;
  const { message, line, column } = cell.error;
  const bounded = message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
  return `SyntaxError: ${bounded} (line ${line}, column ${column})`;
}

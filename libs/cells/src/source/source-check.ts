import { MODULE_ACCESS_ERROR, SHELL_SOURCE_ERROR } from './messages';
import { hasModuleAccess } from './module-access';
import { parseCell, type CellParse } from './parse-cell';
import { looksLikeShell } from './shell-shape';
import { syntaxErrorOf } from './syntax-check';

/**
 * The checks on the code itself, in OpenClaw's order (its `prepareSource`): module access,
 * then shell shape, then syntax. Module access comes first because it is a capability refusal
 * whatever else the code is (`ls; require("fs")` is refused for `require`); shell shape comes
 * before the syntax error because shell text rarely parses and "this is a shell command" is
 * the answer the model can act on. The cell is parsed at most once, and only when a check
 * needs it (the syntax check always does, so every accepted cell costs exactly one parse); a
 * cell that fails that parse is parsed once more as TypeScript, to name what to remove.
 */
export function checkCellSource(code: string): string | null {
  let cell: CellParse | undefined;
  const parsed = (): CellParse => (cell ??= parseCell(code));
  if (hasModuleAccess(code, parsed)) return MODULE_ACCESS_ERROR;
  if (looksLikeShell(code, parsed)) return SHELL_SOURCE_ERROR;
  return syntaxErrorOf(code, parsed());
}

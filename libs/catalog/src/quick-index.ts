import type { CatalogEntry } from './catalog-entry';
import { inputHint, outputHint } from './metadata';

/** The quick index in the `exec` description is at most this many characters (SPEC §5). */
export const MAX_QUICK_INDEX_CHARS = 8000;

export const QUICK_INDEX_HEADING = [
  'Enabled async tool globals (descriptions are intentionally deferred):',
  'Each line is `callableName input -> output`; `-> ?` means unknown output.',
].join('\n');

export const QUICK_INDEX_COMPLETE_FOOTER = 'Call these globals directly; use catalog.search(query) when lookup is ambiguous.';

export function quickIndexOmittedFooter(omitted: number): string {
  return `${omitted} additional tools omitted from this prompt index. Use catalog.search(query); results are callable.`;
}

function footer(included: number, total: number): string {
  return included < total ? quickIndexOmittedFooter(total - included) : QUICK_INDEX_COMPLETE_FOOTER;
}

function render(lines: readonly string[], total: number): string {
  return [QUICK_INDEX_HEADING, ...lines, '', footer(lines.length, total)].join('\n');
}

function compareNames(left: string, right: string): number {
  return left.localeCompare(right, 'en') || (left < right ? -1 : left > right ? 1 : 0);
}

/** `- <callableName> <input> -> <output|?>`. Never descriptions, host ids or endpoints. */
export function quickIndexLine(entry: CatalogEntry): string {
  return `- ${entry.callableName} ${inputHint(entry)} -> ${outputHint(entry) ?? '?'}`;
}

/**
 * The quick index of tool globals: one line per non-MCP tool, declared outputs first and then
 * by name. When everything does not fit in 8000 characters, lines are packed greedily in that
 * order and a line that does not fit is skipped whole, so one huge line cannot blank the rest;
 * skipped tools stay reachable through `catalog.search`. Empty when there are no globals.
 */
export function buildQuickIndex(entries: readonly CatalogEntry[], maxChars = MAX_QUICK_INDEX_CHARS): string {
  const lines = entries
    .filter((entry) => entry.source !== 'mcp')
    .map((entry) => ({ entry, hasOutput: outputHint(entry) !== undefined }))
    .sort(
      (left, right) => Number(right.hasOutput) - Number(left.hasOutput) || compareNames(left.entry.callableName, right.entry.callableName),
    )
    .map(({ entry }) => quickIndexLine(entry));
  if (lines.length === 0) {
    return '';
  }
  const full = render(lines, lines.length);
  if (full.length <= maxChars) {
    return full;
  }
  const included: string[] = [];
  let linesLength = 0;
  for (const line of lines) {
    // heading + "\n" + lines + "\n\n" + footer, with this line added
    const candidate = QUICK_INDEX_HEADING.length + linesLength + 1 + line.length + 2 + footer(included.length + 1, lines.length).length;
    if (candidate <= maxChars) {
      included.push(line);
      linesLength += 1 + line.length;
    }
  }
  return render(included, lines.length);
}

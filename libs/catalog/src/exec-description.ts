import type { CatalogEntry } from './catalog-entry';
import { describeMcpNamespaceForPrompt } from './mcp-prompt';
import { buildQuickIndex } from './quick-index';

export interface ExecDescriptionOptions {
  /** The session's `maxOutputBytes`, quoted in the description (default 65536). */
  readonly maxOutputBytes?: number;
  /** The session's `timeoutMs`, the budget of each exec and wait call (SPEC §8 default 10000). */
  readonly timeoutMs?: number;
}

/** SPEC §5: the sentence that states the session's budget. */
export function execBudgetSentence(timeoutMs: number): string {
  return `Each exec or wait call has a ${timeoutMs} ms wall-clock budget.`;
}

/** SPEC §5: said while the core shell tool is callable as `exec` (no client tool shadows it). */
export const SHELL_FOR_HEAVY_WORK_SENTENCE = 'Use the shell tool exec for heavier computation.';

/** The core shell tool keeps the callable name `exec`; a client tool named `exec` would take it. */
function shellCallableAsExec(entries: readonly CatalogEntry[]): boolean {
  return entries.some((entry) => entry.source === 'openclaw' && entry.toolName === 'exec' && entry.callableName === 'exec');
}

/**
 * The model-visible `exec` description (SPEC §5). Structured as OpenClaw's: what exec does, its
 * wall-clock budget (and, while the shell tool is `exec`, where heavier work goes), how to compose
 * tool calls, the guest API in brief, MCP guidance when MCP tools exist, then the bounded quick
 * index of tool globals.
 */
export function buildExecDescription(entries: readonly CatalogEntry[], options: ExecDescriptionOptions = {}): string {
  const maxOutputBytes = options.maxOutputBytes ?? 65536;
  const timeoutMs = options.timeoutMs ?? 10000;
  const hasMcp = entries.some((entry) => entry.source === 'mcp');
  const lead = [
    'Run JavaScript in Code Mode. The code runs as the body of an async function in a fresh sandbox, so variables never carry over to the next cell.',
    execBudgetSentence(timeoutMs),
    ...(shellCallableAsExec(entries) ? [SHELL_FOR_HEAVY_WORK_SENTENCE] : []),
    "Each enabled tool is an async global function listed in the quick index below: pass one input object, await the tool's JSON result.",
    'Await calls that depend on each other in order and run independent ones together with Promise.all.',
    'When a tool declares its output, use those fields for follow-up calls in the same program instead of spending an extra `exec` to look at them.',
    'A tool shown with `-> ?` has an unknown output shape: return its raw value first, look at it, and compose dependent logic in a later `exec`.',
    'The cell result is the value you `return`; without a return it is `null`.',
    'Tools missing from the bounded index are found with `catalog.search(query)`, whose results are callable: `const [tool] = await catalog.search("..."); return await tool({...});`.',
    "A handle's `describe()` gives its full schema; `catalog.all()` lists the tool globals.",
    'Other globals: `text(value)`, `json(value)` and `console.log` add output; `store(key, value)` and `load(key)` keep small JSON values for later cells of this session;',
    '`results.save(value)`, `results.load(id)` and `results.delete(id)` hold large values by reference;',
    '`API.list(prefix?)` and `API.read(path)` return TypeScript declarations (`results.d.ts`, `tools/<name>.d.ts`, `mcp/<server>.d.ts`);',
    '`await yield_control(reason?)` parks the cell until `wait`; `setTimeout` and `clearTimeout` are available.',
    'A failing tool throws a catchable JavaScript error. When an action may already have happened, check its outcome rather than repeating it: never run a mutation twice.',
    `Output and the final value or error share ${maxOutputBytes} bytes across waits; an oversized object or array comes back as a results reference.`,
    'There are no Node.js modules and no `require` or `import`: shell, file and network work goes through the enabled tool globals.',
    'The `code` field holds JavaScript, never a shell command; to run a command, call the shell tool global from JavaScript instead of resending shell source.',
  ];
  if (hasMcp) {
    lead.push('MCP tools are available only through the `MCP` namespace.');
  }
  const sections = [lead.join(' ')];
  const namespacePrompt = describeMcpNamespaceForPrompt(entries);
  if (namespacePrompt) {
    sections.push(namespacePrompt);
  }
  const index = buildQuickIndex(entries);
  if (index) {
    sections.push(index);
  }
  return sections.join('\n\n');
}

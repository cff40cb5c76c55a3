import type { CodeModeOutput, CodeModeResult, Event, PendingToolCall, ShellAnswer, ToolsView } from '@codemode/contracts';

/** What one answer prints: results on stdout, diagnostics (errors, waiting notes) on stderr. */
export interface Rendered {
  stdout: string;
  stderr: string;
}

/** Event data longer than this is cut on its line: a `run.requested` carries the whole cell. */
const MAX_EVENT_DATA_CHARS = 300;
const MAX_DESCRIPTION_CHARS = 100;

/** Output entries (text as is, json pretty), then the value on stdout or the error on stderr. */
export function renderResult(result: CodeModeResult): Rendered {
  const stdout = (result.output ?? []).map(renderOutput).join('');
  switch (result.status) {
    case 'completed':
      return {
        stdout: `${stdout}${pretty(result.value)}\n`,
        stderr: (result.warnings ?? []).map((w) => `warning: ${w}\n`).join(''),
      };
    case 'failed':
      return { stdout, stderr: `error (${result.code ?? 'failed'}, ${result.failurePhase}): ${result.error}\n` };
    case 'waiting':
      return { stdout, stderr: renderWaiting(result.runId, result.reason, result.pendingToolCalls ?? []) };
  }
}

export function renderOutput(entry: CodeModeOutput): string {
  return entry.type === 'text' ? `${entry.text}\n` : `${pretty(entry.value)}\n`;
}

export function renderWaiting(runId: string, reason: string, pending: PendingToolCall[]): string {
  const calls = pending.map((call) => {
    const input = call.input === undefined ? '' : ` ${truncate(compact(call.input), MAX_EVENT_DATA_CHARS)}`;
    return `  pending ${call.id}${call.tool ? ` ${call.tool}` : ''}${input}\n`;
  });
  return `waiting (${reason}): run ${runId}\n${calls.join('')}`;
}

/** `<id> <type> <runId?> <compact data>`: one grep-able line per event. */
export function renderEvent(event: Event): string {
  const parts = [event.id, event.type];
  if (event.runId) parts.push(event.runId);
  parts.push(truncate(compact(event.data), MAX_EVENT_DATA_CHARS));
  return `${parts.join(' ')}\n`;
}

/** The command's text as the API wrote it; a tool-level error (no exit code) goes to stderr. */
export function renderShell(answer: ShellAnswer): Rendered {
  const text = answer.text.endsWith('\n') || answer.text === '' ? answer.text : `${answer.text}\n`;
  const toolError = answer.details.status === 'failed' && !('exitCode' in answer.details);
  return toolError ? { stdout: '', stderr: `error: ${text}` } : { stdout: text, stderr: '' };
}

/** One line per tool: callable name, source, and the first line of its description. */
export function renderTools(view: ToolsView): string {
  if (view.catalog.length === 0) return '(no tools)\n';
  const width = Math.max(...view.catalog.map((t) => t.callableName.length));
  return view.catalog
    .map((tool) => {
      const description = truncate(tool.description.split('\n')[0] ?? '', MAX_DESCRIPTION_CHARS);
      return `${tool.callableName.padEnd(width)}  ${tool.source.padEnd(8)}  ${description}`.trimEnd() + '\n';
    })
    .join('');
}

/** --json: one compact line per answer, so a script can read the stream line by line. */
export function renderJson(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

function pretty(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value, null, 2);
}

function compact(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

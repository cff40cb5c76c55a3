import { makeHostId, type JsonSchema, type ToolDefinition } from '@codemode/catalog';
import {
  FIND_DEFAULT_LIMIT,
  GREP_DEFAULT_LIMIT,
  GREP_MAX_CONTEXT,
  GREP_MAX_LINE_CHARS,
  LS_DEFAULT_LIMIT,
  MAX_OUTPUT_BYTES,
  READ_MAX_LINES,
} from './limits';
import { EXEC_TOOL_DEFINITION, PROCESS_TOOL_DEFINITION } from './shell-definitions';

/**
 * Catalog definitions of the core (OpenClaw) tools. Input schemas follow OpenClaw's coding tools
 * (parameter names, descriptions, defaults); outputs are the structured results of this library's
 * executors, declared with `additionalProperties: false` so the catalog renders their hint.
 */

const KB = MAX_OUTPUT_BYTES / 1024;
const str = (description?: string): JsonSchema => (description ? { type: 'string', description } : { type: 'string' });
const int = (description?: string): JsonSchema => (description ? { type: 'integer', description } : { type: 'integer' });
const bool = (description: string): JsonSchema => ({ type: 'boolean', description });
const strings: JsonSchema = { type: 'array', items: { type: 'string' } };

/** Closed object schema: every property listed, `required` as given. */
function closed(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false };
}

export const READ_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    path: str('Path to the file to read, relative to the workspace root'),
    offset: int('Line number to start reading from (1-indexed)'),
    limit: int('Maximum number of lines to read'),
  },
  required: ['path'],
};

export const READ_OUTPUT_SCHEMA: JsonSchema = closed(
  {
    path: str(),
    content: str(),
    startLine: int(),
    endLine: int(),
    totalLines: int(),
    truncated: { type: 'boolean' },
    nextOffset: int(),
    notice: str(),
  },
  ['path', 'content', 'startLine', 'endLine', 'totalLines', 'truncated'],
);

export const LS_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    path: str('Directory to list (default: workspace root)'),
    limit: int(`Maximum number of entries to return (default: ${LS_DEFAULT_LIMIT})`),
  },
};

export const LS_OUTPUT_SCHEMA: JsonSchema = closed({ path: str(), entries: strings, truncated: { type: 'boolean' }, notice: str() }, [
  'path',
  'entries',
  'truncated',
]);

export const FIND_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    pattern: str("Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"),
    path: str('Directory to search in (default: workspace root)'),
    limit: int(`Maximum number of results (default: ${FIND_DEFAULT_LIMIT})`),
  },
  required: ['pattern'],
};

export const FIND_OUTPUT_SCHEMA: JsonSchema = closed({ path: str(), files: strings, truncated: { type: 'boolean' }, notice: str() }, [
  'path',
  'files',
  'truncated',
]);

export const GREP_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    pattern: str('Search pattern (regex or literal string)'),
    path: str('Directory or file to search (default: workspace root)'),
    glob: str("Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"),
    ignoreCase: bool('Case-insensitive search (default: false)'),
    literal: bool('Treat pattern as literal string instead of regex (default: false)'),
    context: int(`Number of lines to show before and after each match (default: 0, at most ${GREP_MAX_CONTEXT})`),
    limit: int(`Maximum number of matches to return (default: ${GREP_DEFAULT_LIMIT})`),
  },
  required: ['pattern'],
};

export const GREP_OUTPUT_SCHEMA: JsonSchema = closed(
  {
    matches: {
      type: 'array',
      items: closed({ path: str(), line: int(), text: str(), before: strings, after: strings }, ['path', 'line', 'text']),
    },
    truncated: { type: 'boolean' },
    notice: str(),
  },
  ['matches', 'truncated'],
);

function core(toolName: string, description: string, inputSchema: JsonSchema, outputSchema: JsonSchema): ToolDefinition {
  return {
    hostId: makeHostId('openclaw', 'core', toolName),
    toolName,
    source: 'openclaw',
    description,
    inputSchema,
    outputSchema,
    replaySafe: true,
  };
}

/** The four workspace tools: read-only, deterministic over the workspace, so replay-safe. */
export const WORKSPACE_TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  core(
    'read',
    `Read the contents of a text file in the workspace. Output is truncated to ${READ_MAX_LINES} lines or ${KB}KB (whichever is hit first). Use offset/limit for large files; when you need the full file, continue with offset until complete.`,
    READ_INPUT_SCHEMA,
    READ_OUTPUT_SCHEMA,
  ),
  core(
    'ls',
    `List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to ${LS_DEFAULT_LIMIT} entries or ${KB}KB (whichever is hit first).`,
    LS_INPUT_SCHEMA,
    LS_OUTPUT_SCHEMA,
  ),
  core(
    'find',
    `Search for files by glob pattern. Returns matching paths relative to the workspace root. Skips .git and node_modules. Output is truncated to ${FIND_DEFAULT_LIMIT} results or ${KB}KB (whichever is hit first).`,
    FIND_INPUT_SCHEMA,
    FIND_OUTPUT_SCHEMA,
  ),
  core(
    'grep',
    `Search file contents for a pattern. Returns matching lines with file paths and line numbers. Skips binary files, .git and node_modules. Output is truncated to ${GREP_DEFAULT_LIMIT} matches or ${KB}KB (whichever is hit first). Long lines are truncated to ${GREP_MAX_LINE_CHARS} chars.`,
    GREP_INPUT_SCHEMA,
    GREP_OUTPUT_SCHEMA,
  ),
];

/**
 * Every core tool definition for the catalog, in OpenClaw's order: read, ls, find, grep (executed
 * by `runCoreTool`), then the shell tools exec and process (executed by libs/shell; the catalog
 * calls `process` as `process_<hex>` because `process` is a reserved guest global).
 */
export function coreToolDefinitions(): ToolDefinition[] {
  return [...WORKSPACE_TOOL_DEFINITIONS, EXEC_TOOL_DEFINITION, PROCESS_TOOL_DEFINITION];
}

import { makeHostId, type JsonSchema, type ToolDefinition } from '@codemode/catalog';
import { PROCESS_ACTIONS } from '@codemode/contracts';

/**
 * Catalog definitions of the shell tools (SPEC §7). Only the schemas live here, so the catalog can
 * name and describe them; libs/shell executes them. Neither is replay-safe: a replay would run
 * the command again.
 */

export const EXEC_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    command: { type: 'string', description: 'Shell command to execute' },
    workdir: { type: 'string', description: 'Working directory (defaults to the workspace root)' },
    env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra environment variables' },
    yieldMs: { type: 'number', description: 'Milliseconds to wait before backgrounding (default 10000)' },
    background: { type: 'boolean', description: 'Run in background immediately' },
    timeoutSeconds: { type: 'number', description: 'Timeout in seconds (default 1800; 0 disables); kills the process on expiry' },
    pty: { type: 'boolean', description: 'Run in a pseudo-terminal (PTY) when available (TTY-required CLIs)' },
    title: { type: 'string', description: 'Short label for the session' },
    host: { type: 'string', enum: ['auto', 'sandbox', 'gateway', 'node'], description: 'Exec host (default auto: here)' },
    node: { type: 'string', description: 'Node id or name for host=node' },
    elevated: { type: 'boolean', description: 'Run elevated (not available in this service)' },
  },
  required: ['command'],
};

export const PROCESS_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: [...PROCESS_ACTIONS], description: 'Process action' },
    sessionId: { type: 'string', description: 'Session id for actions other than list' },
    data: { type: 'string', description: 'Data to write for write' },
    eof: { type: 'boolean', description: 'Close stdin after write' },
    keys: { type: 'array', items: { type: 'string' }, description: 'Key tokens to send for send-keys (e.g. C-c, Enter, Up)' },
    hex: { type: 'array', items: { type: 'string' }, description: 'Hex bytes to send for send-keys' },
    literal: { type: 'string', description: 'Literal string for send-keys' },
    text: { type: 'string', description: 'Text to paste for paste' },
    bracketed: { type: 'boolean', description: 'Wrap paste in bracketed mode (default true)' },
    offset: { type: 'number', description: 'Log offset (0-based line index)' },
    limit: { type: 'number', description: 'Log length (lines)' },
    timeout: { type: 'number', description: 'For poll: wait up to this many milliseconds (at most 30000) for output' },
  },
  required: ['action'],
};

/** `{text, details}` as every shell answer is shaped; details vary by action, so left open. */
const SHELL_OUTPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { text: { type: 'string' }, details: { type: 'object' } },
  required: ['text', 'details'],
};

export const EXEC_TOOL_DEFINITION: ToolDefinition = {
  hostId: makeHostId('openclaw', 'core', 'exec'),
  toolName: 'exec',
  source: 'openclaw',
  description:
    'Execute shell commands with background continuation. Use yieldMs/background to continue later via the process tool. Use pty=true for TTY-required commands (terminal UIs, coding agents).',
  inputSchema: EXEC_INPUT_SCHEMA,
  outputSchema: SHELL_OUTPUT_SCHEMA,
  replaySafe: false,
};

export const PROCESS_TOOL_DEFINITION: ToolDefinition = {
  hostId: makeHostId('openclaw', 'core', 'process'),
  toolName: 'process',
  source: 'openclaw',
  description: 'Manage running exec sessions: list, poll, log, write, send-keys, submit, paste, kill, clear, remove.',
  inputSchema: PROCESS_INPUT_SCHEMA,
  outputSchema: SHELL_OUTPUT_SCHEMA,
  replaySafe: false,
};

import { buildCatalog, clientToolDefinition, mcpToolDefinition } from '../catalog';
import { makeHostId, type ToolDefinition } from '../catalog-entry';
import type { JsonSchema } from '../json-schema';

/** Test fixtures shaped like OpenClaw's core tools; the real definitions live in libs/tools. */
function core(
  toolName: string,
  description: string,
  inputSchema: JsonSchema,
  replaySafe: boolean,
  outputSchema?: JsonSchema,
): ToolDefinition {
  return {
    hostId: makeHostId('openclaw', 'core', toolName),
    toolName,
    source: 'openclaw',
    description,
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    replaySafe,
  };
}

export const CORE_TOOLS: ToolDefinition[] = [
  core(
    'read',
    'Read the contents of a file in the workspace.',
    {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path relative to the workspace.' },
        offset: { type: 'number', description: 'Line to start at (1-based).' },
        limit: { type: 'number', description: 'Maximum number of lines to read.' },
      },
      required: ['path'],
    },
    true,
    {
      type: 'object',
      properties: { content: { type: 'string' }, truncated: { type: 'boolean' } },
      required: ['content', 'truncated'],
      additionalProperties: false,
    },
  ),
  core('ls', 'List directory contents.', { type: 'object', properties: { path: { type: 'string' }, limit: { type: 'number' } } }, true),
  core(
    'find',
    'Find files by glob pattern.',
    {
      type: 'object',
      properties: { pattern: { type: 'string' }, path: { type: 'string' }, limit: { type: 'number' } },
      required: ['pattern'],
    },
    true,
  ),
  core(
    'grep',
    'Search file contents for a regular expression.',
    {
      type: 'object',
      properties: {
        pattern: { type: 'string' },
        path: { type: 'string' },
        glob: { type: 'string' },
        ignoreCase: { type: 'boolean' },
        literal: { type: 'boolean' },
        context: { type: 'number' },
        limit: { type: 'number' },
      },
      required: ['pattern'],
    },
    true,
  ),
  core(
    'exec',
    'Execute shell commands with background continuation.',
    {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'Shell command to execute' },
        workdir: { type: 'string' },
        env: { type: 'object', additionalProperties: { type: 'string' } },
        yieldMs: { type: 'number' },
        background: { type: 'boolean' },
        timeout: { type: 'number' },
        pty: { type: 'boolean' },
      },
      required: ['command'],
    },
    false,
  ),
  core(
    'process',
    'Manage running exec sessions: list, poll, log, write, send-keys, submit, paste, kill.',
    {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['list', 'poll', 'log', 'write', 'send-keys', 'submit', 'paste', 'kill', 'clear', 'remove'] },
        sessionId: { type: 'string' },
        data: { type: 'string' },
        offset: { type: 'number' },
        limit: { type: 'number' },
        timeout: { type: 'number' },
      },
      required: ['action'],
    },
    false,
  ),
];

export const MCP_TOOLS: ToolDefinition[] = [
  mcpToolDefinition({
    serverName: 'github',
    toolName: 'create_issue',
    description: 'Create a GitHub issue in a repository.',
    inputSchema: {
      type: 'object',
      properties: {
        repo: { type: 'string', description: 'owner/name' },
        title: { type: 'string' },
        labels: { type: 'array', items: { type: 'string' }, default: [] },
        draft: { type: 'boolean', default: false },
      },
      required: ['repo', 'title', 'draft'],
    },
  }),
  mcpToolDefinition({
    serverName: 'github',
    toolName: 'delete',
    description: 'Delete a branch.',
    inputSchema: { type: 'object', properties: { branch: { type: 'string' } }, required: ['branch'] },
  }),
  mcpToolDefinition({
    serverName: 'Linear App',
    toolName: 'list-issues',
    description: 'List Linear issues.',
    inputSchema: { type: 'object', properties: {} },
  }),
];

export const CLIENT_TOOLS: ToolDefinition[] = [
  clientToolDefinition({
    name: 'fake_create_ticket',
    description: 'Create a support ticket for a customer.',
    inputSchema: { type: 'object', properties: { subject: { type: 'string' } }, required: ['subject'] },
  }),
  clientToolDefinition({
    name: 'lookup-order',
    description: 'Look up an order by id.',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', properties: { status: { type: 'string' } } },
  }),
];

export function fixtureCatalog(extra: ToolDefinition[] = []) {
  return buildCatalog([...CLIENT_TOOLS, ...MCP_TOOLS, ...CORE_TOOLS, ...extra]);
}

export function client(name: string, description = ''): ToolDefinition {
  return clientToolDefinition({ name, description, inputSchema: { type: 'object' } });
}

export function coreTool(name: string, description = ''): ToolDefinition {
  return core(name, description, { type: 'object' }, false);
}

import { z } from 'zod';
import type { ApiErrorBody } from './api-error';
import type { CodeModeResult } from './result';

/**
 * The two tools a model sees (SPEC §14), as their inputs are described to it. `exec` takes
 * CodeModeExecInput (SPEC §3; `command`, the alias of `code`, is accepted but not advertised), `wait`
 * takes `{runId}`. The service checks inputs itself (SPEC §3 input rules): these schemas are what a
 * model is told, not the validation.
 */
export const ExecToolInputSchema = z.object({
  title: z.string().describe('A short title for this cell (at most 120 characters), shown in logs and the console.'),
  code: z.string().describe('JavaScript: the body of an async function. Await tool calls, then `return` the value to answer with.'),
  restartSafe: z
    .boolean()
    .optional()
    .describe(
      'True to make the run rebuildable after a crash: the cell may then call only replay-safe tools (search, describe, read, ls, find, grep, idempotent tools).',
    ),
  awaitResults: z
    .boolean()
    .optional()
    .describe('True to keep the call open until the cell completes or fails: it never answers "waiting".'),
});

export const WaitToolInputSchema = z.object({
  runId: z.string().describe('The runId of a "waiting" result from exec or wait.'),
});

export const CODE_MODE_TOOL_NAMES = ['exec', 'wait'] as const;
export type CodeModeToolName = (typeof CODE_MODE_TOOL_NAMES)[number];

/** `wait`'s description: the same in every session. */
export const WAIT_DESCRIPTION =
  'Resume a Code Mode run that exec (or an earlier wait) answered with status "waiting": it continues the ' +
  'suspended cell with the same runId and answers like exec (completed, failed, or waiting again). Call it ' +
  'with the runId when a waiting result says the cell yielded or is waiting for tool calls.';

/** A JSON Schema object as model APIs take it (no `$schema`, nothing they do not read). */
export type ToolInputJsonSchema = Record<string, unknown> & { type: 'object' };

/** `exec` and `wait` with their input schemas; `execDescription` is the session's (SPEC §5). */
export interface CodeModeTool {
  name: CodeModeToolName;
  description: string;
  inputSchema: ToolInputJsonSchema;
}

export function codeModeTools(execDescription: string): CodeModeTool[] {
  return [
    { name: 'exec', description: execDescription, inputSchema: inputJsonSchema(ExecToolInputSchema) },
    { name: 'wait', description: WAIT_DESCRIPTION, inputSchema: inputJsonSchema(WaitToolInputSchema) },
  ];
}

export const TOOL_DEFINITION_FORMATS = ['openai', 'openai-responses', 'anthropic', 'mcp'] as const;
export type ToolDefinitionFormat = (typeof TOOL_DEFINITION_FORMATS)[number];

/** OpenAI's function tool (Chat Completions `tools`). */
export interface OpenAiFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: ToolInputJsonSchema };
}
/**
 * OpenAI's Responses API function tool (SPEC §18). `strict: false` because the Responses API
 * defaults to strict schemas, which require every property and `additionalProperties: false`:
 * exec's optional fields (`restartSafe`, `awaitResults`, the `command` alias) would be refused.
 */
export interface OpenAiResponsesFunctionTool {
  type: 'function';
  name: string;
  description: string;
  parameters: ToolInputJsonSchema;
  strict: false;
}
/** Anthropic's client tool (Messages `tools`). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ToolInputJsonSchema;
}
/** MCP's `Tool`, as `tools/list` answers it. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: ToolInputJsonSchema;
}
export interface ToolDefinitions {
  openai: OpenAiFunctionTool;
  'openai-responses': OpenAiResponsesFunctionTool;
  anthropic: AnthropicTool;
  mcp: McpTool;
}

/**
 * The tools in the form a model API takes as is (SPEC §14, §18): OpenAI function tools (Chat
 * Completions `tools`, and the Responses API's), Anthropic `tools`, MCP `Tool`.
 */
export function toolDefinitions<F extends ToolDefinitionFormat>(format: F, tools: readonly CodeModeTool[]): ToolDefinitions[F][] {
  const made: ToolDefinitions[ToolDefinitionFormat][] = tools.map((t) => {
    switch (format) {
      case 'openai':
        return { type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } };
      case 'openai-responses':
        return { type: 'function', name: t.name, description: t.description, parameters: t.inputSchema, strict: false };
      case 'anthropic':
        return { name: t.name, description: t.description, input_schema: t.inputSchema };
      default:
        return { name: t.name, description: t.description, inputSchema: t.inputSchema };
    }
  });
  return made as ToolDefinitions[F][];
}

function inputJsonSchema(schema: z.ZodObject): ToolInputJsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return { ...rest, type: 'object' };
}

/** A tool call's answer over MCP, as `CallToolResult` has it. */
export interface McpToolResult {
  [key: string]: unknown;
  content: [{ type: 'text'; text: string }];
  structuredContent: Record<string, unknown>;
  isError: boolean;
}

/** SPEC §14: the result as `structuredContent` and its compact JSON as the one text content; `isError` exactly for `failed`. */
export function mcpToolResult(result: CodeModeResult): McpToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(result) }],
    structuredContent: result,
    isError: result.status === 'failed',
  };
}

/** What a `tools/call` of another name answers (JSON-RPC invalid params). */
export const unknownToolError = (name: string): string => `unknown tool ${name}; this server has two tools, exec and wait.`;

/** JSON-RPC error codes of the MCP surfaces: invalid params, and the implementation-defined server error. */
export const JSON_RPC_INVALID_PARAMS = -32602;
export const JSON_RPC_SERVER_ERROR = -32000;

/**
 * A JSON-RPC error as the MCP SDK's server sends what a request handler throws (its `code`,
 * `message` and `data`). Not the SDK's McpError, whose message is prefixed ("MCP error <code>:
 * ..."): the message on the wire is exactly the service's, as clients match on it.
 */
export class JsonRpcRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  /**
   * What REST answers with an HTTP error (a quota's 429, Redis away's 503) as a JSON-RPC error over
   * MCP: the same message, the REST body (and `retryAfterSeconds`) as data. A bad exec or wait input
   * is not among them: it is answered with a `failed` result.
   */
  static ofHttp(status: number, body: ApiErrorBody, extra: Record<string, unknown> = {}): JsonRpcRefusal {
    return new JsonRpcRefusal(status === 400 ? JSON_RPC_INVALID_PARAMS : JSON_RPC_SERVER_ERROR, body.error, { ...body, ...extra });
  }
}

import type Anthropic from '@anthropic-ai/sdk';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool } from 'openai/resources/responses/responses';
import { codeModeTools, toolDefinitions, WAIT_DESCRIPTION, type OpenAiFunctionTool } from './code-mode-tools';

const tools = codeModeTools('Run JavaScript in a fresh sandbox.');

test('exec carries the session description and SPEC §3 inputs; wait takes {runId}; no $schema for model APIs', () => {
  const [exec, wait] = tools;
  expect(exec.name).toBe('exec');
  expect(exec.description).toBe('Run JavaScript in a fresh sandbox.');
  expect(exec.inputSchema).toMatchObject({ type: 'object', required: ['title', 'code'] });
  expect(Object.keys(exec.inputSchema.properties as object)).toEqual(['title', 'code', 'restartSafe', 'awaitResults']);
  expect(exec.inputSchema.properties).toMatchObject({
    title: { type: 'string' },
    code: { type: 'string' },
    restartSafe: { type: 'boolean' },
    awaitResults: { type: 'boolean' },
  });
  expect(wait).toEqual({
    name: 'wait',
    description: WAIT_DESCRIPTION,
    inputSchema: { type: 'object', properties: { runId: { type: 'string', description: expect.any(String) } }, required: ['runId'] },
  });
  expect(JSON.stringify(tools)).not.toContain('$schema');
});

test('each format is the shape its model API takes', () => {
  const [exec] = tools;
  expect(toolDefinitions('openai', tools)[0]).toEqual({
    type: 'function',
    function: { name: 'exec', description: exec.description, parameters: exec.inputSchema },
  });
  expect(toolDefinitions('openai-responses', tools)[0]).toEqual({
    type: 'function',
    name: 'exec',
    description: exec.description,
    parameters: exec.inputSchema,
    strict: false,
  });
  expect(toolDefinitions('anthropic', tools)[0]).toEqual({ name: 'exec', description: exec.description, input_schema: exec.inputSchema });
  expect(toolDefinitions('mcp', tools)[0]).toEqual({ name: 'exec', description: exec.description, inputSchema: exec.inputSchema });
  for (const format of ['openai', 'openai-responses', 'anthropic', 'mcp'] as const) expect(toolDefinitions(format, tools)).toHaveLength(2);
});

test('the definitions are what each vendor SDK types as a tool, and MCP tools/list accepts them', () => {
  // Checked when this file compiles (npm run typecheck, ts-jest): each assignment fails if a field is missing or mistyped.
  const openai: ChatCompletionTool[] = toolDefinitions('openai', tools);
  const responses: FunctionTool[] = toolDefinitions('openai-responses', tools);
  const anthropic: Anthropic.Messages.Tool[] = toolDefinitions('anthropic', tools);
  expect(responses.map((t) => t.name)).toEqual(openai.map((t) => (t as OpenAiFunctionTool).function.name));
  expect(anthropic.map((t) => t.input_schema.type)).toEqual(['object', 'object']);
  expect(ListToolsResultSchema.parse({ tools: toolDefinitions('mcp', tools) }).tools.map((t) => t.name)).toEqual(['exec', 'wait']);
});

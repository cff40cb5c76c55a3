import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CodeModeResultSchema, type CodeModeResult } from '@codemode/contracts';
import { TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

const KEY = 'ts-source-key';

/** SPEC §19: what a TypeScript cell is answered, REST and MCP alike. */
const TYPESCRIPT_CELL = 'const rows = [1, 2];\nconst first = rows[0] as number;\nreturn first;';
const TYPESCRIPT_ERROR = 'code mode accepts plain JavaScript only; remove TypeScript syntax (an as cast at line 2).';

describe('TypeScript source is refused with what to remove (SPEC §19, real api + worker)', () => {
  let stack: TestStack;
  let mcp: Client | undefined;
  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: `${KEY}:ts` });
  });
  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await stack?.stop();
  });

  const exec = async (sid: string, code: string): Promise<CodeModeResult> => {
    const res = await stack.client(KEY).raw('POST', `/v1/sessions/${sid}/exec`, {
      body: JSON.stringify({ title: 'ts', code }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    return CodeModeResultSchema.parse(res.body);
  };

  it('answers a TypeScript cell over REST with the sentence', async () => {
    expect(await exec('s-ts', TYPESCRIPT_CELL)).toMatchObject({
      status: 'failed',
      code: 'invalid_input',
      failurePhase: 'input',
      error: TYPESCRIPT_ERROR,
    });
  });

  it('checks a large TypeScript cell on a body thread with the same answer', async () => {
    // Over the API's 8 KiB inline limit, so the body is parsed and checked off the event loop.
    const padding = 'var pad = 1;\n'.repeat(1_000);
    const line = padding.split('\n').length + 1;
    expect(await exec('s-ts-large', `${padding}\nlet total: number = 0;`)).toMatchObject({
      status: 'failed',
      code: 'invalid_input',
      error: `code mode accepts plain JavaScript only; remove TypeScript syntax (a type annotation at line ${line}).`,
    });
  });

  it('keeps the SyntaxError answer for source that is neither, and runs JavaScript that looks like TypeScript', async () => {
    expect(await exec('s-ts-neither', 'let n: number = ;')).toMatchObject({
      status: 'failed',
      code: 'invalid_input',
      error: 'SyntaxError: Unexpected token (line 1, column 6)',
    });
    const lookalike = 'const a = 3, b = 2, c = 1;\nlabel: { break label; }\nconst o = { x: a < b > c };\nreturn a > b ? o : null;';
    expect(await exec('s-ts-js', lookalike)).toMatchObject({ status: 'completed', value: { x: false } });
  });

  it('answers a TypeScript cell over /mcp exec with the sentence', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${KEY}` } },
    });
    mcp = new Client({ name: 'e2e-ts', version: '1.0.0' });
    await mcp.connect(transport);
    const result = (await mcp.callTool({ name: 'exec', arguments: { title: 'ts', code: TYPESCRIPT_CELL } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      status: 'failed',
      code: 'invalid_input',
      failurePhase: 'input',
      error: TYPESCRIPT_ERROR,
    });
  });
});

import { buildCatalog, compactInputHint, compactOutputHint } from '@codemode/catalog';
import { coreToolDefinitions } from './definitions';
import { runCoreTool } from './run-core-tool';

describe('coreToolDefinitions', () => {
  const tools = coreToolDefinitions();

  it('lists read, ls, find, grep (replay-safe) then exec and process', () => {
    expect(tools.map((tool) => [tool.toolName, tool.hostId, tool.source, tool.replaySafe])).toEqual([
      ['read', 'openclaw:core:read', 'openclaw', true],
      ['ls', 'openclaw:core:ls', 'openclaw', true],
      ['find', 'openclaw:core:find', 'openclaw', true],
      ['grep', 'openclaw:core:grep', 'openclaw', true],
      ['exec', 'openclaw:core:exec', 'openclaw', false],
      ['process', 'openclaw:core:process', 'openclaw', false],
    ]);
  });

  it('gets callable names from the catalog, process as process_<hex>', () => {
    const names = buildCatalog(tools).entries.map((entry) => entry.callableName);
    expect(names.slice(0, 5)).toEqual(['read', 'ls', 'find', 'grep', 'exec']);
    expect(names[5]).toMatch(/^process_[0-9a-f]{8}$/u);
  });

  it('renders complete output hints for the workspace tools', () => {
    const read = tools[0];
    expect(compactInputHint(read?.inputSchema)).toBe('{ path: string; limit?: number; offset?: number }');
    expect(compactOutputHint(read?.outputSchema)).toBe(
      '{ content: string; endLine: number; path: string; startLine: number; totalLines: number; truncated: boolean; nextOffset?: number; notice?: string }',
    );
    for (const tool of tools.slice(0, 4)) {
      expect(compactOutputHint(tool.outputSchema)).toBeDefined();
    }
  });

  it('declares outputs that match what runCoreTool returns', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const root = await mkdtemp(`${tmpdir()}/codemode-defs-`);
    try {
      await writeFile(`${root}/a.txt`, 'hello\n');
      for (const [name, input] of [
        ['read', { path: 'a.txt' }],
        ['ls', {}],
        ['find', { pattern: '*.txt' }],
        ['grep', { pattern: 'hello', context: 1 }],
      ] as const) {
        const schema = tools.find((tool) => tool.toolName === name)?.outputSchema as {
          properties: Record<string, unknown>;
          required: string[];
        };
        const result = (await runCoreTool(name, input, { workspaceRoot: root })) as unknown as Record<string, unknown>;
        expect(Object.keys(result).every((key) => key in schema.properties)).toBe(true);
        expect(schema.required.every((key) => key in result)).toBe(true);
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

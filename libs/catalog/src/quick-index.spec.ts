import { createHash } from 'node:crypto';
import { buildCatalog } from './catalog';
import { buildExecDescription } from './exec-description';
import { buildQuickIndex, MAX_QUICK_INDEX_CHARS, QUICK_INDEX_COMPLETE_FOOTER, QUICK_INDEX_HEADING } from './quick-index';
import { client, fixtureCatalog } from './testing/fixtures';

const processName = `process_${createHash('sha256').update('openclaw:core:process').digest('hex').slice(0, 8)}`;

describe('buildQuickIndex', () => {
  const { entries } = fixtureCatalog();

  it('lists non-MCP tools, declared outputs first, then by name', () => {
    expect(buildQuickIndex(entries)).toBe(
      [
        'Enabled async tool globals (descriptions are intentionally deferred):',
        'Each line is `callableName input -> output`; `-> ?` means unknown output.',
        '- read { path: string; limit?: number; offset?: number } -> { content: string; truncated: boolean }',
        '- exec { command: string; background?: boolean; env?: { ... }; pty?: boolean; timeout?: number; workdir?: string; yieldMs?: number } -> ?',
        '- fake_create_ticket unknown -> ?',
        '- find { pattern: string; limit?: number; path?: string } -> ?',
        '- grep { pattern: string; context?: number; glob?: string; ignoreCase?: boolean; limit?: number; literal?: boolean; path?: string } -> ?',
        '- lookup_order unknown -> ?',
        '- ls { limit?: number; path?: string } -> ?',
        `- ${processName} { action: string; data?: string; limit?: number; offset?: number; sessionId?: string; timeout?: number } -> ?`,
        '',
        QUICK_INDEX_COMPLETE_FOOTER,
      ].join('\n'),
    );
  });

  it('renders enums of at most 8 values as literal unions, larger ones by type', () => {
    const { entries: tools } = buildCatalog([
      {
        hostId: 'openclaw:core:pick',
        toolName: 'pick',
        source: 'openclaw',
        description: '',
        replaySafe: true,
        inputSchema: { type: 'object', properties: { mode: { type: 'string', enum: ['a', 'b'] } }, required: ['mode'] },
      },
    ]);
    expect(buildQuickIndex(tools)).toContain('- pick { mode: "a" | "b" } -> ?');
  });

  it('never shows descriptions, host ids or MCP tools', () => {
    const index = buildQuickIndex(entries);
    expect(index).not.toContain('Read the contents');
    expect(index).not.toContain('openclaw:core');
    expect(index).not.toContain('MCP.');
  });

  it('stays within 8000 characters, skipping lines that do not fit and counting them', () => {
    const tools = Array.from({ length: 400 }, (_, index) => client(`tool_number_${String(index).padStart(3, '0')}`));
    tools.push(client(`x${'y'.repeat(9000)}`));
    const index = buildQuickIndex(buildCatalog(tools).entries);
    expect(index.length).toBeLessThanOrEqual(MAX_QUICK_INDEX_CHARS);
    expect(index.startsWith(QUICK_INDEX_HEADING)).toBe(true);
    const lines = index.split('\n').filter((line) => line.startsWith('- '));
    const omitted = 401 - lines.length;
    expect(
      index.endsWith(`${omitted} additional tools omitted from this prompt index. Use catalog.search(query); results are callable.`),
    ).toBe(true);
    expect(lines.every((line) => line.length < 100)).toBe(true);
  });

  it('skips one oversized line but keeps later lines that fit', () => {
    const tools = [client('a_tool'), client(`b${'z'.repeat(8000)}`), client('c_tool')];
    const index = buildQuickIndex(buildCatalog(tools).entries);
    expect(index).toContain('- a_tool unknown -> ?');
    expect(index).toContain('- c_tool unknown -> ?');
    expect(index).toContain('1 additional tools omitted from this prompt index.');
  });
});

describe('buildExecDescription', () => {
  it('holds the lead, MCP guidance and the quick index', () => {
    const text = buildExecDescription(fixtureCatalog().entries, { maxOutputBytes: 1234 });
    expect(text.startsWith('Run JavaScript in Code Mode.')).toBe(true);
    expect(text).toContain('1234 bytes');
    expect(text).toContain('MCP tools are available only through the `MCP` namespace.');
    expect(text).toContain('Servers: github, linearApp.');
    expect(text).toContain(QUICK_INDEX_HEADING);
    expect(text.endsWith(QUICK_INDEX_COMPLETE_FOOTER)).toBe(true);
    expect(text).not.toContain('openclaw:core');
  });

  it('omits MCP guidance without MCP tools', () => {
    const text = buildExecDescription(buildCatalog([client('x')]).entries);
    expect(text).not.toContain('MCP namespace');
  });
});

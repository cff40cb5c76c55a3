import { buildCatalog, findByToolName, mcpToolDefinition } from './catalog';
import { McpArgumentShapeError, McpMissingArgumentError } from './errors';
import { applySchemaDefaults, mapMcpArguments } from './mcp-arguments';
import { toLowerCamelIdentifier } from './mcp-names';
import { MCP_TOOLS } from './testing/fixtures';

describe('MCP identifiers', () => {
  it.each([
    ['create_issue', 'createIssue'],
    ['list-issues', 'listIssues'],
    ['Linear App', 'linearApp'],
    ['GetURL', 'getURL'],
    ['2fa_check', 'faCheck'],
    ['___', 'tool'],
  ])('%s → %s', (value, expected) => {
    expect(toLowerCamelIdentifier(value, 'tool')).toBe(expected);
  });

  it('binds tools under MCP.<server>.<tool> with reserved words getting 2', () => {
    const { entries } = buildCatalog(MCP_TOOLS);
    expect(findByToolName(entries, 'create_issue')).toMatchObject({
      callableName: 'MCP.github.createIssue',
      apiPath: 'mcp/github.d.ts',
    });
    expect(findByToolName(entries, 'delete')?.callableName).toBe('MCP.github.delete2');
    expect(findByToolName(entries, 'list-issues')?.callableName).toBe('MCP.linearApp.listIssues');
  });

  it('numbers colliding tool identifiers within a server', () => {
    const { entries } = buildCatalog([
      mcpToolDefinition({ serverName: 's', toolName: 'get_item' }),
      mcpToolDefinition({ serverName: 's', toolName: 'get-item' }),
    ]);
    expect(entries.map((entry) => entry.callableName).sort()).toEqual(['MCP.s.getItem', 'MCP.s.getItem2']);
  });

  it('renames servers that would shadow guest globals', () => {
    const { entries } = buildCatalog([mcpToolDefinition({ serverName: 'catalog', toolName: 'x' })]);
    expect(entries[0]?.callableName).toBe('MCP.catalog2.x');
  });
});

describe('mapMcpArguments', () => {
  const schema = MCP_TOOLS[0]?.inputSchema;

  it('accepts one object and applies defaults', () => {
    expect(mapMcpArguments(schema, [{ repo: 'a/b', title: 't' }])).toEqual({
      repo: 'a/b',
      title: 't',
      labels: [],
      draft: false,
    });
  });

  it('rejects more than one argument or a non-object', () => {
    for (const args of [[{}, {}], ['x'], [null], [[1]]]) {
      expect(() => mapMcpArguments(schema, args)).toThrow(McpArgumentShapeError);
      expect(() => mapMcpArguments(schema, args)).toThrow('MCP namespace tools accept one object argument.');
    }
  });

  it('names missing required fields', () => {
    expect(() => mapMcpArguments(schema, [{ repo: 'a/b' }])).toThrow('Missing required MCP namespace argument: title');
    expect(() => mapMcpArguments(schema, [])).toThrow(new McpMissingArgumentError(['repo', 'title']).message);
    // SPEC §5: the first missing field only, even when several are missing.
    expect(new McpMissingArgumentError(['repo', 'title']).message).toBe('Missing required MCP namespace argument: repo');
    expect(() => mapMcpArguments({ type: 'object', required: ['a', 'b'] }, [{}])).toThrow(/^Missing required MCP namespace argument: a$/u);
  });

  it('fills undefined fields but keeps provided ones and never touches prototypes', () => {
    const schema = JSON.parse('{"properties":{"__proto__":{"default":1},"a":{"default":2}}}') as unknown;
    const out = applySchemaDefaults(schema, { a: undefined });
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(out.a).toBe(2);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(applySchemaDefaults({ properties: { a: { default: 2 } } }, { a: 0 }).a).toBe(0);
  });
});

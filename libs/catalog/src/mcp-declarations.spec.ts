import { apiFiles, apiRead } from './api-files';
import { buildCatalog, findByCallableName, mcpToolDefinition } from './catalog';
import { describe as describeEntry } from './metadata';
import { docComment, escapeDocText } from './schema-to-ts';

const OUTPUT_SCHEMA = {
  type: 'object',
  properties: { temperature: { type: 'number', description: 'Temperature in celsius' }, conditions: { type: 'string' } },
  required: ['temperature', 'conditions'],
};

const { entries } = buildCatalog([
  mcpToolDefinition({
    serverName: 'everything',
    toolName: 'get-structured-content',
    description: 'Returns structured content along with an output schema',
    inputSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
    outputSchema: OUTPUT_SCHEMA,
  }),
  mcpToolDefinition({
    serverName: 'everything',
    toolName: 'get-sum',
    description: 'Returns the sum of two numbers',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  }),
  mcpToolDefinition({
    serverName: 'files',
    toolName: 'search_files',
    description: "Find files by glob, e.g. '**/*.ext' or 'src/**/*.ts'.\n\n  Indented second paragraph.",
    inputSchema: { type: 'object', properties: { pattern: { type: 'string', description: 'A glob like **/*.md' } } },
  }),
]);

describe('MCP declarations', () => {
  const files = apiFiles(entries);
  const everything = apiRead(files, 'mcp/everything.d.ts').content;

  it('types structuredContent from the output schema, and leaves it unknown without one', () => {
    expect(everything).toContain('type McpStructuredToolResult<Structured> = {\n  content: unknown[];\n  structuredContent: Structured;');
    expect(everything).toContain(
      '  function getStructuredContent(input: {\n    location: string;\n  }): Promise<McpStructuredToolResult<{\n' +
        '    /** Temperature in celsius */\n    temperature: number;\n    conditions: string;\n  }>>;',
    );
    expect(everything).toContain('  function getSum(input: {\n    a: number;\n    b: number;\n  }): Promise<McpToolResult>;');
    expect(everything).toContain('type McpToolResult = {\n  content: unknown[];\n  structuredContent?: unknown;');
  });

  it('escapes */ in descriptions as *\\/ and changes nothing else', () => {
    const files2 = apiRead(files, 'mcp/files.d.ts').content;
    expect(files2).toContain("   * Find files by glob, e.g. '**\\/*.ext' or 'src/**\\/*.ts'.\n   *\n   *   Indented second paragraph.");
    expect(files2).toContain('    /** A glob like **\\/*.md */');
    expect(files2).not.toContain('* /');
    expect(escapeDocText("'**/*.ext'")).toBe("'**\\/*.ext'");
    expect(escapeDocText('a * / b */')).toBe('a * / b *\\/');
    expect(docComment('one */ line')).toEqual(['/** one *\\/ line */']);
    expect(docComment('\n\n  kept indent \n\nnext\n\n')).toEqual(['/**', ' *   kept indent', ' *', ' * next', ' */']);
  });

  it('describe() works for MCP handles: metadata, $api header and both schemas', () => {
    const entry = findByCallableName(entries, 'MCP.everything.getStructuredContent');
    expect(entry).toBeDefined();
    const described = describeEntry(entry!);
    expect(described).toMatchObject({
      callableName: 'MCP.everything.getStructuredContent',
      toolName: 'get-structured-content',
      source: 'mcp',
      apiPath: 'mcp/everything.d.ts',
      parameters: { type: 'object', required: ['location'] },
      outputSchema: OUTPUT_SCHEMA,
    });
    expect(described.$api.startsWith('declare namespace MCP.everything {\n  /**\n   * Returns structured content')).toBe(true);
    expect(described.$api).toContain('function getStructuredContent(input: {');
    expect(described.$api.endsWith('}>>;\n}')).toBe(true);
    const sum = describeEntry(findByCallableName(entries, 'MCP.everything.getSum')!);
    expect(sum.$api).toContain('function getSum(');
    expect(sum).not.toHaveProperty('outputSchema');
  });
});

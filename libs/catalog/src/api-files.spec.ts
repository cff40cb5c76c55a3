import { apiFiles, apiList, apiRead } from './api-files';
import { ApiFileNotFoundError, ApiPathTraversalError } from './errors';
import { describe as describeEntry, catalogMetadata, handleMetadata } from './metadata';
import { findByToolName } from './catalog';
import { catalogTelemetry } from './telemetry';
import { fixtureCatalog } from './testing/fixtures';

describe('API files', () => {
  const { entries } = fixtureCatalog();
  const files = apiFiles(entries, [{ name: 'github', description: 'GitHub issues and branches.' }]);

  it('lists results, one file per tool global, and MCP files', () => {
    const paths = apiList(files).files.map((file) => file.path);
    expect(paths[0]).toBe('results.d.ts');
    expect(paths).toContain('tools/read.d.ts');
    expect(paths).toContain('tools/fake_create_ticket.d.ts');
    expect(paths).toContain('mcp/index.d.ts');
    expect(paths).toContain('mcp/github.d.ts');
    expect(paths).toContain('mcp/linearApp.d.ts');
    expect(paths.filter((path) => path.startsWith('tools/'))).toHaveLength(8);
    for (const file of apiList(files).files) {
      expect(file.bytes).toBe(Buffer.byteLength(apiRead(files, file.path).content, 'utf8'));
    }
  });

  it('filters by prefix', () => {
    expect(apiList(files, 'mcp/').files.map((file) => file.path)).toEqual(['mcp/index.d.ts', 'mcp/github.d.ts', 'mcp/linearApp.d.ts']);
    expect(apiList(files, 'nothing').files).toEqual([]);
  });

  it('renders tool declarations from schemas', () => {
    const read = apiRead(files, 'tools/read.d.ts');
    expect(read.content).toContain('type ReadInput = {\n  /** Path relative to the workspace. */\n  path: string;');
    expect(read.content).toContain('  limit?: number;');
    expect(read.content).toContain('type ReadOutput = {\n  content: string;\n  truncated: boolean;\n};');
    expect(read.content).toContain('declare function read(input: ReadInput): Promise<ReadOutput>;');
    const exec = apiRead(files, './tools/exec.d.ts').content;
    expect(exec).toContain('env?: Record<string, string>;');
  });

  it('renders MCP servers with defaults made optional', () => {
    const github = apiRead(files, 'mcp/github.d.ts').content;
    expect(github).toContain('declare namespace MCP.github {');
    expect(github).toContain('function createIssue(input: {');
    expect(github).toContain('    draft?: boolean;');
    expect(github).toContain('    repo: string;');
    expect(github).toContain('function delete2(input: {');
    expect(github).toContain('GitHub issues and branches.');
    expect(apiRead(files, 'mcp/index.d.ts').content).toContain('/// <reference path="./github.d.ts" />');
  });

  it('rejects .. segments and unknown paths', () => {
    expect(() => apiRead(files, '../etc/passwd')).toThrow(ApiPathTraversalError);
    expect(() => apiRead(files, 'tools/../results.d.ts')).toThrow('API paths must not contain ".." segments: tools/../results.d.ts');
    expect(() => apiList(files, 'mcp/..')).toThrow(ApiPathTraversalError);
    expect(() => apiRead(files, 'tools/nope.d.ts')).toThrow(ApiFileNotFoundError);
    expect(() => apiRead(files, 'tools/nope.d.ts')).toThrow(
      'Unknown API file: tools/nope.d.ts. Use API.list() to see the available files.',
    );
    expect(() => apiRead(files, 7)).toThrow('API path must be a string.');
  });

  it('never leaks host ids', () => {
    for (const file of files) {
      expect(file.content).not.toMatch(/openclaw:core|client:client|mcp:github/);
    }
  });
});

describe('metadata', () => {
  const { entries } = fixtureCatalog();

  it('describes a core handle with compact hints', () => {
    const read = findByToolName(entries, 'read');
    expect(read && handleMetadata(read)).toEqual({
      callableName: 'read',
      toolName: 'read',
      description: 'Read the contents of a file in the workspace.',
      source: 'openclaw',
      apiPath: 'tools/read.d.ts',
      input: '{ path: string; limit?: number; offset?: number }',
      output: '{ content: string; truncated: boolean }',
    });
  });

  it('shows client and MCP inputs as unknown, with full schemas in describe()', () => {
    const ticket = findByToolName(entries, 'fake_create_ticket');
    expect(ticket && handleMetadata(ticket)).toMatchObject({ input: 'unknown', source: 'client' });
    expect(ticket && handleMetadata(ticket)).not.toHaveProperty('output');
    expect(ticket && describeEntry(ticket).parameters).toEqual({
      type: 'object',
      properties: { subject: { type: 'string' } },
      required: ['subject'],
    });
    expect(ticket && describeEntry(ticket).$api).toContain(
      'declare function fake_create_ticket(input: Fake_create_ticketInput): Promise<Fake_create_ticketOutput>;',
    );
    const issue = findByToolName(entries, 'create_issue');
    expect(issue && describeEntry(issue).$api).toMatch(/^declare namespace MCP\.github \{\n[\s\S]*function createIssue\(/u);
    expect(issue && catalogMetadata(issue)).toMatchObject({
      callableName: 'MCP.github.createIssue',
      apiPath: 'mcp/github.d.ts',
      source: 'mcp',
      replaySafe: false,
    });
    expect(JSON.stringify(entries.map(catalogMetadata))).not.toMatch(/hostId|openclaw:core/);
  });

  it('counts sources for telemetry', () => {
    expect(catalogTelemetry(entries)).toEqual({ catalogSize: 11, sources: { openclaw: 6, mcp: 3, client: 2 } });
  });
});

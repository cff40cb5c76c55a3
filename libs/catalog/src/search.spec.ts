import { buildCatalog } from './catalog';
import { resolveSearchLimit, searchCatalog } from './search';
import { CORE_TOOLS, client, fixtureCatalog } from './testing/fixtures';
import { tokenize } from './tokenize';

describe('tokenize', () => {
  it.each([
    ['fake_create_ticket', ['fake', 'create', 'ticket']],
    ['listURL', ['list', 'url']],
    ['URLParser', ['url', 'parser']],
    ['createIssue v2Api', ['create', 'issue', 'v2', 'api']],
    ['a b-c', []],
    ['3d_render', ['3d', 'render']],
    ['Read the FILE!', ['read', 'the', 'file']],
  ])('%s', (text, terms) => {
    expect(tokenize(text)).toEqual(terms);
  });
});

describe('searchCatalog', () => {
  const { entries } = fixtureCatalog();
  const names = (query: unknown, options = {}) => searchCatalog(entries, query, options).map((entry) => entry.callableName);

  it('ranks by BM25 over names and descriptions', () => {
    expect(names('ticket')).toEqual(['fake_create_ticket']);
    expect(names('create ticket')[0]).toBe('fake_create_ticket');
    // no stemming: `issues` is a different term
    expect(names('issue')).toEqual(['MCP.github.createIssue']);
    expect(names('issues')).toEqual(['MCP.linearApp.listIssues']);
    expect(names('github issue')[0]).toBe('MCP.github.createIssue');
  });

  it('indexes parameter names of core tools only', () => {
    // `ignoreCase` is a grep parameter → terms ignore, case
    expect(names('ignore case')).toEqual(['grep']);
    // `subject` is a client parameter: never indexed
    expect(names('subject')).toEqual([]);
  });

  it('puts an exact callable name first, then a case-insensitive one', () => {
    const { entries: tools } = buildCatalog([client('Files', 'files files files'), client('files', 'unrelated'), client('FILES', 'files')]);
    expect(searchCatalog(tools, 'files').map((entry) => entry.callableName)).toEqual(['files', 'Files', 'FILES']);
    expect(searchCatalog(tools, 'FILES').map((entry) => entry.callableName)[0]).toBe('FILES');
  });

  it('finds a tool by its callable name even when its terms rank it low', () => {
    expect(names('read')[0]).toBe('read');
    expect(names('ls')[0]).toBe('ls');
    const processName = entries.find((entry) => entry.toolName === 'process')?.callableName ?? '';
    expect(names(processName)[0]).toBe(processName);
    expect(names('process')[0]).toBe(processName);
  });

  it('returns [] for no usable terms, no match or a non-string', () => {
    expect(names('')).toEqual([]);
    expect(names('a ? !')).toEqual([]);
    expect(names('zzzz qqqq')).toEqual([]);
    expect(names(42)).toEqual([]);
  });

  it('breaks ties by catalog order', () => {
    const { entries: tools } = buildCatalog([client('alpha', 'widget'), client('beta', 'widget'), client('gamma', 'widget')]);
    expect(searchCatalog(tools, 'widget').map((entry) => entry.callableName)).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('applies default and clamped limits', () => {
    const many = buildCatalog(Array.from({ length: 60 }, (_, index) => client(`tool${index}`, 'shared word'))).entries;
    expect(searchCatalog(many, 'shared')).toHaveLength(8);
    expect(searchCatalog(many, 'shared', { limit: 3 })).toHaveLength(3);
    expect(searchCatalog(many, 'shared', { limit: 500 })).toHaveLength(50);
    expect(searchCatalog(many, 'shared', { limit: 20, maxLimit: 10 })).toHaveLength(10);
    expect(searchCatalog(many, 'shared', { defaultLimit: 4 })).toHaveLength(4);
    expect(resolveSearchLimit({ limit: 0 })).toBe(1);
    expect(resolveSearchLimit({ limit: 'x' })).toBe(8);
    expect(resolveSearchLimit({ limit: 2.9 })).toBe(2);
  });

  it('ranks the file reader first for "read file contents"', () => {
    const { entries: core } = buildCatalog(CORE_TOOLS);
    expect(searchCatalog(core, 'read file contents').map((entry) => entry.toolName)[0]).toBe('read');
    expect(searchCatalog(core, 'shell command').map((entry) => entry.toolName)[0]).toBe('exec');
  });
});

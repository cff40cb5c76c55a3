import { createHash } from 'node:crypto';
import { buildCatalog, findByToolName } from './catalog';
import { makeHostId } from './catalog-entry';
import { CORE_TOOLS, client, coreTool, fixtureCatalog } from './testing/fixtures';
import { assignCallableNames, sanitizeCallableBase } from './callable-names';

const hex = (hostId: string, length = 8) => createHash('sha256').update(hostId).digest('hex').slice(0, length);
const callableOf = (names: string[], source: 'client' | 'openclaw' = 'client') => {
  const tools = names.map((name) => (source === 'client' ? client(name) : coreTool(name)));
  const { entries } = buildCatalog(tools);
  return new Map(entries.map((entry) => [entry.toolName, entry.callableName]));
};
const clientId = (name: string) => makeHostId('client', 'client', name);

describe('sanitizeCallableBase', () => {
  it.each([
    ['read', 'read'],
    ['list-url', 'list_url'],
    ['3d_render', 'tool_3d_render'],
    ['__openclaw_x', 'tool___openclaw_x'],
    ['__openclawfoo', 'tool___openclawfoo'],
    ['über.tool', '_ber_tool'],
    ['$money', '$money'],
    ['a b', 'a_b'],
    ['日本', '__'],
  ])('%s → %s', (name, expected) => {
    expect(sanitizeCallableBase(name)).toBe(expected);
  });
});

describe('callable names', () => {
  it.each([
    ['reserved word', 'delete'],
    ['reserved word', 'class'],
    ['guest global', 'catalog'],
    ['guest global', 'store'],
    ['guest global', 'results'],
    ['platform surface', 'nodes'],
    ['platform surface', 'skills'],
    ['platform surface (reserved whether or not a session enables it)', 'agents'],
    ['standard global', 'JSON'],
    ['standard global', 'Promise'],
    ['host name', 'require'],
    ['async body local', 'arguments'],
  ])('%s %s gets a hash suffix', (_kind, name) => {
    expect(callableOf([name]).get(name)).toBe(`${name}_${hex(clientId(name))}`);
  });

  it('keeps ordinary names and the shell exec tool as the global exec', () => {
    const { entries } = fixtureCatalog();
    expect(findByToolName(entries, 'read')?.callableName).toBe('read');
    expect(findByToolName(entries, 'exec')?.callableName).toBe('exec');
    expect(findByToolName(entries, 'grep')?.callableName).toBe('grep');
  });

  it('names the core process tool process_<hex of its host id>', () => {
    const { entries } = buildCatalog(CORE_TOOLS);
    expect(findByToolName(entries, 'process')?.callableName).toBe(`process_${hex('openclaw:core:process')}`);
  });

  it('prefixes a digit-first name and a __openclaw name with tool_', () => {
    const names = callableOf(['3d_render', '__openclaw_x']);
    expect(names.get('3d_render')).toBe('tool_3d_render');
    expect(names.get('__openclaw_x')).toBe('tool___openclaw_x');
  });

  it('lets the exact name win over names that only sanitize to it, whatever the order', () => {
    for (const order of [
      ['list-url', 'list_url', 'list url'],
      ['list_url', 'list url', 'list-url'],
    ]) {
      const names = callableOf(order);
      expect(names.get('list_url')).toBe('list_url');
      expect(names.get('list-url')).toBe(`list_url_${hex(clientId('list-url'))}`);
      expect(names.get('list url')).toBe(`list_url_${hex(clientId('list url'))}`);
    }
  });

  it('keeps listURL and listUrl apart (case matters) while list-url collides with neither', () => {
    const names = callableOf(['listURL', 'listUrl', 'list-url']);
    expect(names.get('listURL')).toBe('listURL');
    expect(names.get('listUrl')).toBe('listUrl');
    expect(names.get('list-url')).toBe('list_url');
  });

  it('gives colliding unicode names distinct suffixed names', () => {
    const names = callableOf(['ütil', 'ätil']);
    const values = [names.get('ütil'), names.get('ätil')];
    expect(new Set(values).size).toBe(2);
    expect(values).toContain('_til');
  });

  it('lengthens the suffix by two hex digits when the 8-digit name is taken', () => {
    const taken = `foo_${hex(clientId('foo'))}`;
    const names = assignCallableNames([client('foo')], [taken, 'foo']);
    expect(names.get(clientId('foo'))).toBe(`foo_${hex(clientId('foo'), 10)}`);
  });

  it('suffixes a name whose sanitized form collides with a suffixed tool name', () => {
    // `delete` becomes delete_<hex>; a tool literally named that keeps it, so delete goes longer.
    const suffixed = `delete_${hex(clientId('delete'))}`;
    const names = callableOf(['delete', suffixed]);
    expect(names.get(suffixed)).toBe(suffixed);
    expect(names.get('delete')).toBe(`delete_${hex(clientId('delete'), 10)}`);
  });

  it('lets a client tool shadow a same-named core tool', () => {
    const shadowing = client('read', 'client read');
    const { entries, shadowed } = buildCatalog([...CORE_TOOLS, shadowing]);
    const reads = entries.filter((entry) => entry.toolName === 'read');
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatchObject({ source: 'client', callableName: 'read' });
    expect(shadowed.map((tool) => tool.hostId)).toEqual(['openclaw:core:read']);
  });

  it('does not depend on input order', () => {
    const tools = [client('a-b'), client('a_b'), client('class'), coreTool('x'), client('x')];
    const one = buildCatalog(tools).entries.map((entry): [string, string] => [entry.hostId, entry.callableName]);
    const two = buildCatalog([...tools].reverse()).entries.map((entry): [string, string] => [entry.hostId, entry.callableName]);
    expect(new Map(one)).toEqual(new Map(two));
  });

  it('orders entries core → MCP → client', () => {
    const { entries } = fixtureCatalog();
    const sources = entries.map((entry) => entry.source);
    expect(sources).toEqual(
      [...sources].sort((a, b) => ['openclaw', 'mcp', 'client'].indexOf(a) - ['openclaw', 'mcp', 'client'].indexOf(b)),
    );
    expect(sources[0]).toBe('openclaw');
  });

  it('rejects duplicate host ids', () => {
    expect(() => buildCatalog([client('a'), client('a')])).toThrow('duplicate tool catalog host id');
  });
});

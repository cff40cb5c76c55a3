import { testCatalog, toolMetadata } from '../pool/test-support';
import { PreparedCatalog } from './prepared-catalog';

const PREPARED = testCatalog(['echo', 'write'], { replaySafe: ['echo'] });

describe('PreparedCatalog: what a run catalog is sent into the VM as', () => {
  const prepared = new PreparedCatalog(PREPARED);

  it('sends the prepared text as null', () => {
    expect(prepared.forGuest(PREPARED)).toBeNull();
  });

  it('names a global whose metadata is a prepared one’s by its index, and sends the others as their metadata', () => {
    const run = JSON.stringify({
      globals: [
        { metadata: toolMetadata('extra'), replaySafe: true },
        { metadata: toolMetadata('write'), replaySafe: false },
        { metadata: toolMetadata('echo', { description: 'another echo' }), replaySafe: true },
        { metadata: toolMetadata('echo'), replaySafe: true, idempotent: true },
      ],
      mcp: [{ serverIdentifier: 'srv', serverName: 's', tools: [] }],
      surfaces: [{ name: 'agents.run', replaySafe: false }],
    });
    expect(JSON.parse(prepared.forGuest(run)!)).toEqual({
      globals: [
        { metadata: toolMetadata('extra') },
        { prepared: 1 },
        { metadata: toolMetadata('echo', { description: 'another echo' }) },
        { prepared: 0 },
      ],
      mcp: [{ serverIdentifier: 'srv', serverName: 's', tools: [] }],
      surfaces: [{ name: 'agents.run', replaySafe: false }],
    });
  });

  it('never passes on a `prepared` a run catalog held, and sends what is no catalog as it is', () => {
    const forged = JSON.stringify({ globals: [{ prepared: 0, metadata: toolMetadata('mine') }, { prepared: 1 }], mcp: [] });
    expect(JSON.parse(prepared.forGuest(forged)!)).toEqual({ globals: [{ metadata: toolMetadata('mine') }, {}], mcp: [] });
    for (const text of ['not json', '[]', '{"globals":3}', 'null']) expect(prepared.forGuest(text)).toBe(text);
  });

  it('refuses to prepare a text without a globals list', () => {
    expect(() => new PreparedCatalog('{"mcp":[]}')).toThrow(TypeError);
  });
});

import { testCatalog, toolMetadata } from '../pool/test-support';
import { PreparedCatalog, type SentCatalog } from './prepared-catalog';

const PREPARED = testCatalog(['echo', 'write'], { replaySafe: ['echo'] });

/** The text a catalog was sent as, parsed; fails unless its prepared globals were named by index. */
function named(sent: SentCatalog): unknown {
  if (sent.kind !== 'named') throw new TypeError(`expected a named catalog, got ${JSON.stringify(sent)}`);
  return JSON.parse(sent.text);
}

describe('PreparedCatalog: what a run catalog is sent into the VM as', () => {
  const prepared = new PreparedCatalog(PREPARED);

  it('sends the prepared text as the prepared catalog', () => {
    expect(prepared.forGuest(PREPARED)).toEqual({ kind: 'prepared' });
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
    const expected = {
      globals: [
        { metadata: toolMetadata('extra') },
        { prepared: 1 },
        { metadata: toolMetadata('echo', { description: 'another echo' }) },
        { prepared: 0 },
      ],
      mcp: [{ serverIdentifier: 'srv', serverName: 's', tools: [] }],
      surfaces: [{ name: 'agents.run', replaySafe: false }],
    };
    expect(named(prepared.forGuest(run))).toEqual(expected);
    // Sent again (a session's next run), and after another text: the same.
    expect(named(prepared.forGuest(run))).toEqual(expected);
    prepared.forGuest(testCatalog(['other']));
    expect(named(prepared.forGuest(run))).toEqual(expected);
  });

  it('never passes on a `prepared` a run catalog held, and sends what is no catalog as it is', () => {
    const forged = JSON.stringify({ globals: [{ prepared: 0, metadata: toolMetadata('mine') }, { prepared: 1 }], mcp: [] });
    expect(named(prepared.forGuest(forged))).toEqual({ globals: [{ metadata: toolMetadata('mine') }, {}], mcp: [] });
    for (const text of ['not json', '[]', '{"globals":3}', 'null']) expect(prepared.forGuest(text)).toEqual({ kind: 'as-is', text });
  });

  it('refuses to prepare a text without a globals list', () => {
    expect(() => new PreparedCatalog('{"mcp":[]}')).toThrow(TypeError);
  });
});

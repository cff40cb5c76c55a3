import type { BridgeHost } from '../engine/types';
import { SandboxPool } from './sandbox-pool';
import { cell, testCatalog, toolMetadata, valueOf } from './test-support';

const PREPARED = testCatalog(['echo', 'write']);

const host: BridgeHost = {
  async dispatch(call) {
    return { tool: (call.args as { tool?: unknown }).tool };
  },
};

/** What a cell sees of its tool globals: each one's metadata fields, and what a call of it dispatches. */
const PROBE =
  'const seen = {}; for (const name of ["echo", "write", "extra"]) { const h = globalThis[name];' +
  ' seen[name] = h === undefined ? null : [h.callableName, h.description, JSON.stringify(h), Object.isFrozen(h), (await h({})).tool] }' +
  ' return [seen, catalog.all().map((h) => h.callableName)]';

/**
 * SandboxPoolOptions.preparedCatalogJson: the boot image holds the handles of a catalog built
 * ahead. A run takes a prepared handle only for a global whose metadata is the same, and what a
 * cell does to its handles stays in its own VM.
 */
describe('SandboxPool: a catalog prepared with the boot image', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    // One thread: every cell below starts from the same thread's image, one after the other.
    pool = await SandboxPool.start({ threads: 1, preparedCatalogJson: PREPARED });
  });
  afterAll(async () => {
    await pool.close();
  });

  async function run(code: string, catalogJson: string): Promise<unknown> {
    return JSON.parse(valueOf(await pool.run({ ...cell(code), catalogJson }, host)));
  }

  it('gives a global whose metadata differs a handle of its own, and a catalog with more globals all of them', async () => {
    const changed = JSON.stringify({
      globals: [
        { metadata: toolMetadata('echo', { description: 'another echo' }), replaySafe: false },
        { metadata: toolMetadata('write'), replaySafe: false },
        { metadata: toolMetadata('extra'), replaySafe: false },
      ],
      mcp: [],
    });
    expect(await run(PROBE, changed)).toEqual([
      {
        echo: [
          'echo',
          'another echo',
          JSON.stringify({ callableName: 'echo', toolName: 'echo', description: 'another echo', source: 'client' }),
          true,
          'echo',
        ],
        write: ['write', 'the write tool', JSON.stringify(toolMetadata('write')), true, 'write'],
        extra: ['extra', 'the extra tool', JSON.stringify(toolMetadata('extra')), true, 'extra'],
      },
      ['echo', 'write', 'extra'],
    ]);
    // A field the prepared metadata does not have is a difference too.
    const labelled = testCatalog(['write']).replace('"source":"client"', '"source":"client","label":"Write"');
    expect(await run('return [write.label, JSON.stringify(write), typeof echo]', labelled)).toEqual([
      'Write',
      // In the order a handle's metadata keeps its fields.
      JSON.stringify({ callableName: 'write', toolName: 'write', label: 'Write', description: 'the write tool', source: 'client' }),
      'undefined',
    ]);
  });

  it("keeps what a cell does to the prepared handles in that cell's VM", async () => {
    const tamper =
      'const tried = [Reflect.set(echo, "description", "x"), Reflect.set(echo, "extra", 1), Reflect.defineProperty(echo, "toolName", { value: "y" }),' +
      ' Reflect.set(echo.toJSON(), "source", "x"), Reflect.set(write, "describe", null)]; echo = 7; return [tried, echo]';
    expect(await run(tamper, PREPARED)).toEqual([[false, false, false, false, false], 7]);
    expect(await run(PROBE, PREPARED)).toEqual([
      {
        echo: ['echo', 'the echo tool', JSON.stringify(toolMetadata('echo')), true, 'echo'],
        write: ['write', 'the write tool', JSON.stringify(toolMetadata('write')), true, 'write'],
        extra: null,
      },
      ['echo', 'write'],
    ]);
  });

  it('reads no `prepared` key a run catalog held: its global is built from its metadata', async () => {
    const forged = JSON.stringify({ globals: [{ prepared: 0, metadata: toolMetadata('mine') }], mcp: [] });
    expect(await run('return [typeof echo, mine.description, catalog.all().length]', forged)).toEqual(['undefined', 'the mine tool', 1]);
  });
});

describe('SandboxPool: no catalog prepared', () => {
  it('reads no `prepared` key a run catalog held either', async () => {
    const pool = await SandboxPool.start({ threads: 1 });
    try {
      const forged = JSON.stringify({ globals: [{ prepared: 0, metadata: toolMetadata('mine') }], mcp: [] });
      const outcome = await pool.run({ ...cell('return [mine.description, catalog.all().length]'), catalogJson: forged }, host);
      expect(JSON.parse(valueOf(outcome))).toEqual(['the mine tool', 1]);
    } finally {
      await pool.close();
    }
  });
});

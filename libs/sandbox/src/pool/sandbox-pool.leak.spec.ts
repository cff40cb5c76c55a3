import { SandboxPool } from './sandbox-pool';
import { cell, testCatalog, valueOf } from './test-support';

describe('SandboxPool with the debug QuickJS build', () => {
  it('disposes every VM without leaking handles', async () => {
    const logs: string[] = [];
    const pool = await SandboxPool.start({ threads: 1, variant: 'debug', logger: (level, msg) => logs.push(`${level}: ${msg}`) });
    try {
      expect(valueOf(await pool.run(cell('text("a"); console.log({ b: 1 }); json([1]); return { ok: true }')))).toBe('{"ok":true}');
      expect(
        valueOf(
          await pool.run(
            cell('const id = setTimeout(() => {}, 50); clearTimeout(id); await new Promise((r) => setTimeout(r, 5)); return 1'),
          ),
        ),
      ).toBe('1');
      expect((await pool.run(cell('throw new Error("x")'))).status).toBe('failed');
      expect((await pool.run(cell('const o = {}; o.o = o; return o'))).status).toBe('failed');
      expect((await pool.run(cell('await new Promise(() => {})'))).status).toBe('failed');
      expect((await pool.run(cell('setTimeout(() => { throw new Error("t") }, 1)'))).status).toBe('failed');
      expect(valueOf(await pool.run(cell('return 2')))).toBe('2');
      const host = { dispatch: (call: { args: unknown }) => Promise.resolve(call.args) };
      const withCatalog = {
        ...cell('const [h] = catalog.all(); return [h, (await h(1)).input, typeof MCP]'),
        catalogJson: testCatalog(['echo']),
      };
      expect(valueOf(await pool.run(withCatalog, host))).toContain('"callableName":"echo"');
      const refused = {
        ...cell('try { await echo(1) } catch {} for (;;) {}', { timeoutMs: 2000 }),
        catalogJson: testCatalog(['echo']),
        restartSafe: true,
      };
      expect((await pool.run(refused, host)).status).toBe('failed');
      const resumed = cell('await yield_control(); return 3');
      expect((await pool.run(resumed)).status).toBe('waiting');
      expect(valueOf(await pool.resume(resumed.runId, { timeoutMs: 1000 }))).toBe('3');
      const discarded = cell('await new Promise((r) => setTimeout(r, 1000))', { timeoutMs: 100 });
      expect((await pool.run(discarded)).status).toBe('waiting');
      expect(pool.discard(discarded.runId)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(logs.filter((line) => line.startsWith('error'))).toEqual([]);
    } finally {
      await pool.close();
    }
  });
});

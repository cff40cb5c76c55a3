import { TestStack } from './utils/test-stack';

jest.setTimeout(60_000);

/** SPEC §6: a run's history is capped; the run that reaches the cap fails with its exact error. */
describe('per-run history cap', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ env: { CODEMODE_RUN_HISTORY_MAX_EVENTS: '100' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const CAP_FAILURE = { status: 'failed', code: 'internal_error', error: 'code mode run history limit reached; start a new run.' };
  const typesOf = async (sessionId: string): Promise<string[]> =>
    (await stack.client().events(sessionId, { limit: 1000 })).events.map((e) => e.type);
  const endsOf = (types: string[]): string[] => types.filter((t) => /^run\.(completed|failed|expired|lost)$/.test(t));

  it('fails a run whose events reach the cap with internal_error, and records that failure', async () => {
    const client = stack.client();
    const result = await client.exec('cap', {
      title: 'many calls',
      code: 'let n = 0; for (let i = 0; i < 80; i++) { try { await ls({}); n++; } catch (e) { text(String(e.message)); } } return n;',
    });
    expect(result).toMatchObject(CAP_FAILURE);
    const types = await typesOf('cap');
    expect(endsOf(types)).toEqual(['run.failed']);
    expect(types.length).toBeLessThanOrEqual(102);
    // The next run of the session starts with a history of its own.
    expect(await client.exec('cap', { title: 'next', code: 'return (await ls({})) !== undefined' })).toMatchObject({
      status: 'completed',
      value: true,
    });
  });

  it("fails a cell whose last reads' events pass the cap after it returned: its end goes behind them and never says completed", async () => {
    const client = stack.client();
    // run.requested, run.started and 49 reads fill the cap of 100; the 50th read's two events, held
    // while the cell returns, are refused with the end sent right behind them.
    const result = await client.exec('cap-end', {
      title: 'reads to the cap',
      code: 'for (let i = 0; i < 50; i++) await ls({}); return "done";',
    });
    expect(result).toMatchObject(CAP_FAILURE);
    const types = await typesOf('cap-end');
    expect(endsOf(types)).toEqual(['run.failed']);
    expect(types).toHaveLength(101);
  });
});

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

  it('fails a run whose events reach the cap with internal_error, and records that failure', async () => {
    const client = stack.client();
    const result = await client.exec('cap', {
      title: 'many calls',
      code: 'let n = 0; for (let i = 0; i < 80; i++) { try { await ls({}); n++; } catch (e) { text(String(e.message)); } } return n;',
    });
    expect(result).toMatchObject({
      status: 'failed',
      code: 'internal_error',
      error: 'code mode run history limit reached; start a new run.',
    });
    const events = (await client.events('cap', { limit: 1000 })).events;
    const types = events.map((e) => e.type);
    expect(types.filter((t) => /^run\.(completed|failed|expired|lost)$/.test(t))).toEqual(['run.failed']);
    expect(events.length).toBeLessThanOrEqual(102);
    // The next run of the session starts with a history of its own.
    expect(await client.exec('cap', { title: 'next', code: 'return (await ls({})) !== undefined' })).toMatchObject({
      status: 'completed',
      value: true,
    });
  });
});

import type { CodeModeResult } from '@codemode/contracts';
import { allEvents } from '../chaos/chaos-helpers';
import { TestStack } from '../utils/test-stack';

jest.setTimeout(90_000);

function runIdOf(result: CodeModeResult): string {
  if (result.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(result)}`);
  return result.runId;
}

/**
 * SPEC §12: a parked run survives its sandbox thread too. The watchdog terminates the only thread
 * (a native builtin overran its budget); the run parked in it is released, not lost, and the next
 * wait restores it from its image.
 */
describe('durable parked runs: their sandbox thread terminated by the watchdog', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 1, env: { CODEMODE_SANDBOX_THREADS: '1' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('releases the runs parked in the thread and restores them at the next wait', async () => {
    const client = stack.client();
    const sid = 'thread-loss';
    const parked = runIdOf(await client.exec(sid, { title: 'kept', code: 'const kept = { n: 7 }; await yield_control(); return kept;' }));
    await client.putSession(sid, { codeMode: { timeoutMs: 300 } });
    expect(await client.exec(sid, { title: 'overrun', code: 'return new Array(1e8).join(",").length' })).toMatchObject({
      status: 'failed',
      code: 'timeout',
    });
    await client.putSession(sid, { codeMode: { timeoutMs: 10_000 } });
    expect(await client.wait(sid, parked)).toMatchObject({ status: 'completed', value: { n: 7 } });
    const events = (await allEvents(client, sid)).filter((e) => e.runId === parked);
    expect(events.map((e) => e.type)).toEqual([
      'run.requested',
      'run.started',
      'run.parked',
      'run.released',
      'run.recovered',
      'run.resumed',
      'run.completed',
    ]);
    expect(events[3].data).toMatchObject({ reason: 'sandbox thread terminated: another run overran its deadline' });
  });
});

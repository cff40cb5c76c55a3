import type { CodeModeResult } from '@codemode/contracts';
import { allEvents } from './chaos/chaos-helpers';
import { TestStack } from './utils/test-stack';

jest.setTimeout(120_000);

function expectWaiting(result: CodeModeResult): Extract<CodeModeResult, { status: 'waiting' }> {
  if (result.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(result)}`);
  return result;
}

/**
 * SPEC §18 "A wait with nothing to do answers at once": a wait on a run parked only for platform
 * calls nobody answered answers `waiting` with the same pendingToolCalls, records one `run.waited`
 * and never resumes the VM; once an answer is in, the next wait resumes the run as before.
 */
describe('a wait with nothing to do', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 1 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers at once, 20 times, without resuming the run; the platform answer then completes it', async () => {
    const client = stack.client();
    const sid = 'idle-wait';
    await client.putTools(sid, [{ name: 'ask', description: 'answered by the platform' }]);
    const asked = expectWaiting(await client.exec(sid, { title: 'ask', code: 'const a = await ask({ q: 1 }); return a.n + 1;' }));
    expect(asked.pendingToolCalls).toEqual([{ id: 'bridge:callValue:1', method: 'callValue', tool: 'ask', input: { q: 1 } }]);
    const before = (await allEvents(client, sid)).length;
    const timings: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      const again = expectWaiting(await client.wait(sid, asked.runId));
      timings.push(performance.now() - started);
      expect(again).toEqual({ ...asked, output: undefined, telemetry: asked.telemetry });
    }
    const events = (await allEvents(client, sid)).slice(before);
    // One event per wait, and it is the wait's: the VM was never resumed or parked again.
    expect(events.map((e) => e.type)).toEqual(Array.from({ length: 20 }, () => 'run.waited'));
    expect(events[0].data).toEqual({ input: { runId: asked.runId }, result: JSON.parse(JSON.stringify({ ...asked, output: undefined })) });
    timings.sort((a, b) => a - b);
    // Generous for shared cores: a resume and re-park of the VM costs a worker round trip and two events.
    expect(timings[10]).toBeLessThan(500);
    const transcript = await client.transcript(sid);
    expect(transcript.filter((entry) => entry.call === 'wait' && entry.kind === 'input')).toHaveLength(20);

    await client.toolResults(sid, asked.runId, [{ id: 'bridge:callValue:1', ok: true, value: { n: 41 } }]);
    expect(await client.wait(sid, asked.runId)).toMatchObject({ status: 'completed', value: 42 });
    const resumed = (await allEvents(client, sid)).filter((e) => e.type === 'run.resumed');
    expect(resumed).toHaveLength(1);
  });

  it('resumes the run once one of its calls is answered, then answers at once again for the other', async () => {
    const client = stack.client();
    const sid = 'idle-wait-two';
    await client.putTools(sid, [{ name: 'ask', description: 'answered by the platform' }]);
    const code = 'const [a, b] = await Promise.all([ask({ q: 1 }), ask({ q: 2 })]); return a + b;';
    const asked = expectWaiting(await client.exec(sid, { title: 'two', code }));
    expect(asked.pendingToolCalls?.map((c) => c.id)).toEqual(['bridge:callValue:1', 'bridge:callValue:2']);
    await client.toolResults(sid, asked.runId, [{ id: 'bridge:callValue:1', ok: true, value: 1 }]);
    const second = expectWaiting(await client.wait(sid, asked.runId));
    expect(second.pendingToolCalls?.map((c) => c.id)).toEqual(['bridge:callValue:2']);
    const afterResume = await allEvents(client, sid);
    expect(afterResume.filter((e) => e.type === 'run.resumed')).toHaveLength(1);
    expect(afterResume.filter((e) => e.type === 'run.waited')).toHaveLength(0);

    expect(await client.wait(sid, asked.runId)).toMatchObject({ status: 'waiting', pendingToolCalls: second.pendingToolCalls });
    const idle = (await allEvents(client, sid)).slice(afterResume.length);
    expect(idle.map((e) => e.type)).toEqual(['run.waited']);

    await client.toolResults(sid, asked.runId, [{ id: 'bridge:callValue:2', ok: true, value: 2 }]);
    expect(await client.wait(sid, asked.runId)).toMatchObject({ status: 'completed', value: 3 });
  });

  it('a run parked by a yield is resumed as before', async () => {
    const client = stack.client();
    const sid = 'idle-wait-yield';
    const first = expectWaiting(await client.exec(sid, { title: 'yield', code: 'await yield_control("later"); return 7;' }));
    expect(await client.wait(sid, first.runId)).toMatchObject({ status: 'completed', value: 7 });
    const types = (await allEvents(client, sid)).map((e) => e.type);
    expect(types).toContain('run.resumed');
    expect(types).not.toContain('run.waited');
  });
});

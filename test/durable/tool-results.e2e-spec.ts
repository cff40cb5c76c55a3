import { allEvents } from '../chaos/chaos-helpers';
import { stackRedis, TestStack } from '../utils/test-stack';

jest.setTimeout(90_000);

/**
 * SPEC §2/§12: platform answers are accepted (202) once they are in the log, also when the owner
 * does not take them (here: stopped, its lease still valid); whoever resumes the run applies them,
 * the owner itself included once it runs again.
 */
describe('tool results the owner does not take', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 1, env: { CODEMODE_LEASE_MS: '30000' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('records them in the log with a 202, and the owner applies them at the next wait', async () => {
    const client = stack.client();
    const sid = 'slow-owner';
    await client.putTools(sid, [{ name: 'ask', description: 'answered by the platform' }]);
    const asked = await client.exec(sid, { title: 'ask', code: 'const a = await ask({ q: 1 }); return a.n + 1;' });
    if (asked.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(asked)}`);
    const [owner] = stack.workers;
    process.kill(owner.pid, 'SIGSTOP');
    let status: number;
    try {
      const answer = await client.raw('POST', `/v1/sessions/${sid}/runs/${asked.runId}/tool-results`, {
        body: JSON.stringify({ results: [{ id: 'bridge:callValue:1', ok: true, value: { n: 41 } }] }),
      });
      status = answer.status;
    } finally {
      process.kill(owner.pid, 'SIGCONT');
    }
    expect(status).toBe(202);
    expect(await client.wait(sid, asked.runId)).toMatchObject({ status: 'completed', value: 42 });
    const events = (await allEvents(client, sid)).filter((e) => e.runId === asked.runId);
    expect(events.filter((e) => e.type === 'tool.settled').map((e) => e.data)).toEqual([
      { callId: 'bridge:callValue:1', ok: true, source: 'client', answeredBy: 'platform', result: { n: 41 } },
    ]);
    // Its owner resumed it: nobody took it over.
    expect(events.filter((e) => e.type === 'run.recovered')).toEqual([]);
  });

  it('refuses a request that answers one call twice, recording nothing', async () => {
    const client = stack.client();
    const sid = 'twice';
    await client.putTools(sid, [{ name: 'ask', description: 'answered by the platform' }]);
    const asked = await client.exec(sid, { title: 'ask', code: 'const a = await ask({}); return a.n;' });
    if (asked.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(asked)}`);
    const answer = await client.raw('POST', `/v1/sessions/${sid}/runs/${asked.runId}/tool-results`, {
      body: JSON.stringify({
        results: [
          { id: 'bridge:callValue:1', ok: true, value: { n: 1 } },
          { id: 'bridge:callValue:1', ok: true, value: { n: 2 } },
        ],
      }),
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 'results: each id may appear only once', code: 'invalid_input', details: { field: 'results' } });
    expect((await allEvents(client, sid)).filter((e) => e.type === 'tool.settled')).toEqual([]);
    await client.abort(sid, asked.runId);
  });

  it("removes an aborted parked run's image at once", async () => {
    const client = stack.client();
    const sid = 'aborted-image';
    const parked = await client.exec(sid, { title: 'park', code: 'await yield_control(); return 1;' });
    if (parked.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(parked)}`);
    const redis = stackRedis();
    try {
      const key = `${stack.prefix}:{default:${sid}}:image:${parked.runId}`;
      expect(await redis.exists(key)).toBe(1);
      expect(await client.abort(sid, parked.runId)).toMatchObject({ status: 'failed', code: 'aborted' });
      for (let i = 0; i < 50 && (await redis.exists(key)) === 1; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await redis.exists(key)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });
});

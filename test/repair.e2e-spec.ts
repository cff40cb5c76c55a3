import { createServer, type Server } from 'node:http';
import { REPAIR_REASONS, type CodeModeResult, type Repair } from '@codemode/contracts';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

const allowed = (remainingAttempts: number): Repair => ({ allowed: true, remainingAttempts, reason: REPAIR_REASONS.allowed });
const dispatched = (remainingAttempts: number): Repair => ({ allowed: false, remainingAttempts, reason: REPAIR_REASONS.dispatched });
const exhausted: Repair = { allowed: false, remainingAttempts: 0, reason: REPAIR_REASONS.exhausted };

function startTool(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` });
    }),
  );
}

describe('bounded repair on failed results (SPEC §16)', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  let tool: Awaited<ReturnType<typeof startTool>>;

  beforeAll(async () => {
    tool = await startTool();
    stack = await TestStack.start();
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
    tool?.server.close();
  });

  const exec = (sid: string, code: string): Promise<CodeModeResult> => client.exec(sid, { title: 'repair', code });
  const repairOf = (result: CodeModeResult): Repair | undefined => (result.status === 'failed' ? result.repair : undefined);

  it('counts failed cells in a row down to "no repair attempts left"; a completed cell resets the count', async () => {
    // The timeout below is then quick.
    expect((await client.raw('PUT', '/v1/sessions/rep-chain', { body: JSON.stringify({ codeMode: { timeoutMs: 300 } }) })).status).toBe(
      200,
    );
    const syntax = await exec('rep-chain', 'return (');
    expect(syntax).toMatchObject({ status: 'failed', code: 'invalid_input', failurePhase: 'input', repair: allowed(1) });
    const thrown = await exec('rep-chain', 'throw new Error("boom")');
    expect(thrown).toMatchObject({ status: 'failed', failurePhase: 'guest', repair: allowed(0) });
    expect(repairOf(await exec('rep-chain', 'throw new Error("boom")'))).toEqual(exhausted);
    // A refused wait ran nothing: it neither counts nor resets, and carries no repair.
    const refused = await client.wait('rep-chain', 'cm_unknown');
    expect(refused).toMatchObject({ status: 'failed', error: 'code mode run is unavailable or expired.' });
    expect(refused).not.toHaveProperty('repair');
    expect(repairOf(await exec('rep-chain', 'throw new Error("boom")'))).toEqual(exhausted);
    const done = await exec('rep-chain', 'return 1');
    expect(done).toMatchObject({ status: 'completed', value: 1 });
    expect(done).not.toHaveProperty('repair');
    expect(repairOf(await exec('rep-chain', 'while (true) {}'))).toEqual(allowed(1));
    // The transcript records each result with the repair it was answered with.
    const { entries } = (await client.raw('GET', '/v1/sessions/rep-chain/transcript')).body as { entries: { result?: CodeModeResult }[] };
    const recorded = entries.flatMap((entry) => (entry.result ? [repairOf(entry.result)] : []));
    expect(recorded).toEqual([allowed(1), allowed(0), exhausted, undefined, exhausted, undefined, allowed(1)]);
  });

  it('gives the dispatched sentence to a failure after a tool call, and counts a wait that ends the run', async () => {
    const put = await client.raw('PUT', '/v1/sessions/rep-called/tools', {
      body: JSON.stringify({
        tools: [
          { name: 'write_row', description: 'Writes a row', endpoint: `${tool.url}/write` },
          { name: 'ask_human', description: 'Ask the operator' },
        ],
      }),
    });
    expect(put.status).toBe(200);
    const afterCall = await exec('rep-called', 'await write_row({ id: 1 }); throw new Error("after the write")');
    expect(afterCall).toMatchObject({ status: 'failed', bridgeDispatchStarted: true, repair: dispatched(1) });
    const parked = await exec('rep-called', 'const a = await ask_human({ q: 1 }); throw new Error(a)');
    expect(parked).toMatchObject({ status: 'waiting' });
    expect(parked).not.toHaveProperty('repair');
    const { runId } = parked as Extract<CodeModeResult, { status: 'waiting' }>;
    const ack = await client.raw('POST', `/v1/sessions/rep-called/runs/${runId}/tool-results`, {
      body: JSON.stringify({ results: [{ id: 'bridge:callValue:1', ok: true, value: 'no' }] }),
    });
    expect(ack.status).toBe(202);
    const ended = await client.wait('rep-called', runId);
    expect(ended).toMatchObject({ status: 'failed', repair: dispatched(0) });
  });

  it('takes repairAttempts from PUT /v1/sessions/{sid}: clamped to 0–10, 0 turning repair off', async () => {
    const configure = async (body: unknown): Promise<number> => {
      const res = await client.raw('PUT', '/v1/sessions/rep-off', { body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      return (res.body as { repairAttempts: number }).repairAttempts;
    };
    expect(await configure({ repairAttempts: 99 })).toBe(10);
    expect(await configure({ repairAttempts: 'many' })).toBe(2);
    expect(await configure({ repairAttempts: 0 })).toBe(0);
    expect(await configure({ codeMode: { timeoutMs: 2000 } })).toBe(0);
    expect(((await client.raw('GET', '/v1/sessions/rep-off')).body as { repairAttempts: number }).repairAttempts).toBe(0);
    expect(repairOf(await exec('rep-off', 'return (;'))).toEqual(exhausted);
    expect(repairOf(await exec('rep-off', 'throw new TypeError("no")'))).toEqual(exhausted);
  });
});

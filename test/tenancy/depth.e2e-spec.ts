import { randomBytes, randomUUID } from 'node:crypto';
import type { CodeModeClient } from '@codemode/client';
import { TestStack } from '../utils/test-stack';

/**
 * SPEC §10 "Depth", adversarially: bodies nested thousands of levels deep on every kind of route
 * (exec, wait, tool-results, PUT /tools, a session PUT, shell exec) get the SPEC answer and never a 500, both below
 * and above the size at which the API parses bodies on a body thread; exactly 128 levels still
 * run; values a cell returns or passes to tools are bounded the same way. The other tenant's cell
 * completes after every attack.
 */

jest.setTimeout(60_000);

const run = randomBytes(4).toString('hex');
const keys = { alpha: `da-${run}`, beta: `db-${run}` };
const BODY_TOO_DEEP = 'request body nests deeper than 128 levels.';
const VALUE_TOO_DEEP = 'value nests deeper than 128 levels.';

let stack: TestStack;
let alpha: CodeModeClient;
let beta: CodeModeClient;

beforeAll(async () => {
  stack = await TestStack.start({ apiKeys: `${keys.alpha}:alpha,${keys.beta}:beta` });
  alpha = stack.client(keys.alpha);
  beta = stack.client(keys.beta);
});

afterAll(async () => {
  await stack?.stop();
});

/** JSON text of `levels` nested arrays; `[[[...]]]`. */
const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
/** A body whose `extra` field nests `levels - 1` deep (the body object is level 1), padded past `padBytes`. */
const deepBody = (fields: Record<string, unknown>, levels: number, padBytes = 0): string =>
  `{${Object.entries(fields)
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
    .join(',')},"pad":${JSON.stringify('x'.repeat(padBytes))},"extra":${nested(levels - 1)}}`;

const post = (client: CodeModeClient, method: string, path: string, body: string) =>
  client.raw(method, path, { body, headers: { 'content-type': 'application/json' } });

async function betaUnaffected(): Promise<void> {
  expect(await beta.exec('b', { title: 'add', code: 'return 1+1' })).toMatchObject({ status: 'completed', value: 2 });
}

const failedInput = (error: string) => ({
  status: 'failed',
  error,
  code: 'invalid_input',
  failurePhase: 'input',
  bridgeDispatchStarted: false,
});

/** Bodies up to 8 KiB are parsed on the event loop, larger ones on a body thread: both paths. */
const SIZES = [
  ['a small body (under 8 KiB) nested 4,000 levels deep', 4000, 0],
  ['a large body (64 KiB) nested 5,000 levels deep', 5000, 64 * 1024],
] as const;

describe.each(SIZES)('%s', (_label, levels, pad) => {
  it('is the size the case says', () => {
    const body = deepBody({ title: 't', code: 'return 1' }, levels, pad);
    expect(body.length <= 8 * 1024).toBe(pad === 0);
  });

  it('exec and wait answer 200 failed/invalid_input with the SPEC text', async () => {
    const exec = await post(alpha, 'POST', '/v1/sessions/s1/exec', deepBody({ title: 't', code: 'return 1' }, levels, pad));
    expect(exec.status).toBe(200);
    expect(exec.body).toMatchObject(failedInput(BODY_TOO_DEEP));
    const wait = await post(alpha, 'POST', '/v1/sessions/s1/wait', deepBody({ runId: `cm_${randomUUID()}` }, levels, pad));
    expect(wait.status).toBe(200);
    expect(wait.body).toMatchObject(failedInput(BODY_TOO_DEEP));
    await betaUnaffected();
  });

  it('tool-results, PUT /tools and PUT /sessions/{sid} answer 400 with the SPEC text', async () => {
    const routes: [string, string, string][] = [
      ['POST', `/v1/sessions/s1/runs/cm_${randomUUID()}/tool-results`, deepBody({ results: [] }, levels, pad)],
      ['PUT', '/v1/sessions/s1/tools', deepBody({ tools: [] }, levels, pad)],
      ['PUT', '/v1/sessions/s1', deepBody({}, levels, Math.min(pad, 32 * 1024))],
      ['POST', '/v1/sessions/s1/shell/exec', deepBody({ command: 'true' }, levels, Math.min(pad, 32 * 1024))],
    ];
    for (const [method, path, body] of routes) {
      const answer = await post(alpha, method, path, body);
      expect({ path, status: answer.status, body: answer.body }).toEqual({
        path,
        status: 400,
        body: { error: BODY_TOO_DEEP, code: 'invalid_input' },
      });
    }
    await betaUnaffected();
  });
});

it('exactly 128 levels run; 129 are refused; brackets inside strings do not count', async () => {
  const code = `return ${JSON.stringify('['.repeat(5000))}.length`;
  for (const pad of [0, 64 * 1024]) {
    const ok = await post(alpha, 'POST', '/v1/sessions/s2/exec', deepBody({ title: 't', code }, 128, pad));
    expect(ok.body).toMatchObject({ status: 'completed', value: 5000 });
    const refused = await post(alpha, 'POST', '/v1/sessions/s2/exec', deepBody({ title: 't', code }, 129, pad));
    expect(refused.body).toMatchObject(failedInput(BODY_TOO_DEEP));
  }
});

it('a cell returning or passing a tool a 200-deep value fails with the SPEC text', async () => {
  const deep = 'let v = []; for (let i = 1; i < 200; i++) v = [v];';
  expect(await alpha.exec('s3', { title: 'ret', code: `${deep} return v;` })).toMatchObject({
    status: 'failed',
    error: VALUE_TOO_DEEP,
    code: 'invalid_input',
    failurePhase: 'guest',
  });
  await alpha.putTools('s3', [{ name: 'sink', description: 'takes anything' }]);
  const passed = await alpha.exec('s3', { title: 'pass', code: `${deep} return await sink(v);` });
  expect(passed).toMatchObject({ status: 'failed' });
  expect((passed as { error: string }).error).toContain(`TypeError: ${VALUE_TOO_DEEP}`);
  const stored = await alpha.exec('s3', {
    title: 'store',
    code: `${deep} try { await store('k', v); return 'stored'; } catch (e) { return e.message; }`,
  });
  expect(stored).toMatchObject({ status: 'completed', value: VALUE_TOO_DEEP });
  await betaUnaffected();
});

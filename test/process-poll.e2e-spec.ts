import type { CodeModeClient } from '@codemode/client';
import type { CodeModeResult } from '@codemode/contracts';
import { TestStack } from './utils/test-stack';

jest.setTimeout(90_000);

interface Answer {
  text: string;
  details: Record<string, unknown>;
}

/** SPEC §7: what a session ended by its 1-second timeout tells the model. */
const GUIDANCE_1S =
  'Command timed out after 1 seconds. If this command is expected to take longer, re-run with a higher timeout (e.g., exec timeout=300).';
const EXITED_BY_TIMEOUT = `Process exited with timeout.\n\n${GUIDANCE_1S}`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `process poll` as SPEC §7 states it, over REST and from a cell: `timeout` as an integer string,
 * the `retryInMs` backoff of quiet polls, and the texts of a session its timeout ended (also once
 * its worker is gone and the session is rebuilt from the log).
 */
describe('process poll (SPEC §7)', () => {
  let stack: TestStack;
  let client: CodeModeClient;
  const post = async (sid: string, route: 'shell/exec' | 'process', body: unknown): Promise<Answer> => {
    const res = await client.raw('POST', `/v1/sessions/${sid}/${route}`, {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    return res.body as Answer;
  };
  const background = async (sid: string, command: string, extra: Record<string, unknown> = {}) =>
    String((await post(sid, 'shell/exec', { command, background: true, ...extra })).details.sessionId);
  /** Polls until the session is no longer running; the last answer. */
  const untilExited = async (sid: string, sessionId: string): Promise<Answer> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const answer = await post(sid, 'process', { action: 'poll', sessionId, timeout: '1000' });
      if (answer.details.status !== 'running') return answer;
      if (Date.now() > deadline) throw new Error(`session ${sessionId} did not exit: ${answer.text}`);
    }
  };
  const completed = (result: CodeModeResult) => {
    expect(result).toMatchObject({ status: 'completed' });
    return (result as Extract<CodeModeResult, { status: 'completed' }>).value as Record<string, unknown>;
  };

  beforeAll(async () => {
    stack = await TestStack.start();
    client = stack.client();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  describe('over REST', () => {
    it('accepts timeout as an integer string and waits for output with it', async () => {
      const id = await background('pp-rest-1', 'sleep 0.5; echo late; sleep 30');
      const started = Date.now();
      const answer = await post('pp-rest-1', 'process', { action: 'poll', sessionId: id, timeout: '5000' });
      expect(answer.text).toBe('late\n\nProcess still running.');
      expect(answer.details).toMatchObject({ status: 'running', sessionId: id });
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      await post('pp-rest-1', 'process', { action: 'kill', sessionId: id });
    });

    it('refuses a timeout of the wrong type with 400 naming the field', async () => {
      for (const timeout of ['soon', '2.5', true, { ms: 1 }]) {
        const res = await client.raw('POST', '/v1/sessions/pp-rest-2/process', {
          body: JSON.stringify({ action: 'poll', sessionId: 'any', timeout }),
        });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_input', details: { field: 'timeout' } });
        expect((res.body as { error: string }).error).toBe('timeout: must be a number of milliseconds or an integer string');
      }
    });

    it('tells quiet polls to back off 5000, 10000, 30000, then 60000 ms, and starts over on new output', async () => {
      const id = await background('pp-rest-3', 'echo one; read go; echo two; sleep 30');
      const first = await post('pp-rest-3', 'process', { action: 'poll', sessionId: id, timeout: 3000 });
      expect(first.text).toBe('one\n\nProcess still running.');
      expect(first.details.retryInMs).toBeUndefined();
      const hints: unknown[] = [];
      for (let i = 0; i < 5; i += 1) {
        const quiet = await post('pp-rest-3', 'process', { action: 'poll', sessionId: id });
        expect(quiet.text).toBe('(no new output)\n\nProcess still running.');
        hints.push(quiet.details.retryInMs);
      }
      expect(hints).toEqual([5000, 10000, 30000, 60000, 60000]);
      await post('pp-rest-3', 'process', { action: 'write', sessionId: id, data: 'x\n' });
      const fresh = await post('pp-rest-3', 'process', { action: 'poll', sessionId: id, timeout: '3000' });
      expect(fresh.text).toBe('two\n\nProcess still running.');
      expect(fresh.details.retryInMs).toBeUndefined();
      expect((await post('pp-rest-3', 'process', { action: 'poll', sessionId: id })).details.retryInMs).toBe(5000);
      await post('pp-rest-3', 'process', { action: 'kill', sessionId: id });
    });

    it('answers a foreground command ended by its timeout with the exact guidance', async () => {
      const answer = await post('pp-rest-4', 'shell/exec', { command: 'sleep 30', timeoutSeconds: 1 });
      expect(answer.text).toContain(GUIDANCE_1S);
      expect(answer.text).not.toContain('timeoutSeconds=300');
      expect(answer.details).toMatchObject({ status: 'failed', timedOut: true });
    });

    it('polls and logs a session ended by its timeout as timed out, also after its worker is gone', async () => {
      const talker = await background('pp-rest-5', 'echo partial; sleep 30', { timeoutSeconds: 1 });
      const silent = await background('pp-rest-5', 'sleep 30', { timeoutSeconds: 1 });
      for (const [id, output] of [
        [talker, 'partial'],
        [silent, '(no new output)'],
      ]) {
        const last = await untilExited('pp-rest-5', id);
        if (id === silent) expect(last.text).toBe(`${output}\n\n${EXITED_BY_TIMEOUT}`);
        expect(last.text.endsWith(`\n\n${EXITED_BY_TIMEOUT}`)).toBe(true);
        expect(last.details).toMatchObject({ status: 'failed', sessionId: id, timedOut: true });
      }
      const expectTimedOutAnswers = async () => {
        const poll = await post('pp-rest-5', 'process', { action: 'poll', sessionId: silent });
        expect(poll.text).toBe(`(no new output)\n\n${EXITED_BY_TIMEOUT}`);
        expect(poll.details).toMatchObject({ status: 'failed', timedOut: true });
        const quietLog = await post('pp-rest-5', 'process', { action: 'log', sessionId: silent });
        expect(quietLog.text).toBe(GUIDANCE_1S);
        expect(quietLog.details).toMatchObject({ status: 'failed', timedOut: true });
        expect((await post('pp-rest-5', 'process', { action: 'log', sessionId: talker })).text).toBe(`partial\n\n${GUIDANCE_1S}`);
        const list = await post('pp-rest-5', 'process', { action: 'list' });
        expect(list.text).toContain('[timeout]');
      };
      await expectTimedOutAnswers();

      // The worker that ran them stops; a new one answers from the session's event log.
      await sleep(300);
      expect(await stack.workers[0].stop()).toBe(0);
      await stack.addWorker();
      await expectTimedOutAnswers();
      const rebuilt = await post('pp-rest-5', 'process', { action: 'poll', sessionId: talker });
      expect(rebuilt.text).toBe(`partial\n\n${EXITED_BY_TIMEOUT}`);
    });
  });

  describe('from a cell', () => {
    let processTool: string;
    beforeAll(async () => {
      const tools = await client.getTools('pp-cell');
      processTool = tools.catalog.map((t) => t.callableName).find((name) => /^process_[0-9a-f]{8}$/.test(name))!;
      expect(processTool).toBeDefined();
    });

    it('accepts a string timeout, refuses junk naming the callable, and backs quiet polls off', async () => {
      const value = completed(
        await client.exec('pp-cell', {
          title: 'poll backoff',
          code: `
            const started = await exec({ command: 'sleep 0.3; echo one; sleep 30', background: true });
            const id = started.details.sessionId;
            const first = await ${processTool}({ action: 'poll', sessionId: id, timeout: '3000' });
            const hints = [];
            for (let i = 0; i < 5; i += 1) hints.push((await ${processTool}({ action: 'poll', sessionId: id })).details.retryInMs);
            let junk = 'accepted';
            try { await ${processTool}({ action: 'poll', sessionId: id, timeout: 'soon' }); } catch (e) { junk = e.message; }
            await ${processTool}({ action: 'kill', sessionId: id });
            return { started: started.text, first: first.text, firstRetry: first.details.retryInMs ?? null, hints, junk };`,
        }),
      );
      expect(value.started).toMatch(
        new RegExp(`Use ${processTool} \\(list/poll/log/write/send-keys/submit/paste/kill/clear/remove\\) for follow-up\\.$`),
      );
      expect(value.first).toBe('one\n\nProcess still running.');
      expect(value.firstRetry).toBeNull();
      expect(value.hints).toEqual([5000, 10000, 30000, 60000, 60000]);
      expect(value.junk).toBe(`Invalid ${processTool} input: timeout: must be a number of milliseconds or an integer string`);
    });

    it('polls and logs a session ended by its timeout with the guidance', async () => {
      const value = completed(
        await client.exec('pp-cell', {
          title: 'timed out',
          code: `
            const started = await exec({ command: 'echo partial; sleep 30', timeoutSeconds: 1, background: true });
            const id = started.details.sessionId;
            let poll;
            for (let i = 0; i < 8; i += 1) {
              poll = await ${processTool}({ action: 'poll', sessionId: id, timeout: '1000' });
              if (poll.details.status !== 'running') break;
            }
            const again = await ${processTool}({ action: 'poll', sessionId: id });
            const log = await ${processTool}({ action: 'log', sessionId: id });
            return { poll: poll.text, details: poll.details, again: again.text, log: log.text };`,
        }),
      );
      expect(String(value.poll).endsWith(`\n\n${EXITED_BY_TIMEOUT}`)).toBe(true);
      expect(value.details).toMatchObject({ status: 'failed', timedOut: true });
      expect(value.again).toBe(`(no new output)\n\n${EXITED_BY_TIMEOUT}`);
      expect(value.log).toBe(`partial\n\n${GUIDANCE_1S}`);
    });
  });
});

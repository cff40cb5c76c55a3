import { rmSync } from 'node:fs';
import type { ShellExitedData } from '@codemode/contracts';
import { pollWaitMs } from './actions/poll';
import { answerFromHistory } from './answer-from-history';
import { ProcessInputError } from './errors';
import { rebuildSessions } from './history';
import type { Confinement } from './sandbox/confinement';
import { writeSandboxEtc } from './sandbox/sandbox-etc';
import type { ShellEvent } from './shell-events';
import { CONFIG, details, makeRegistry, pollUntilExit, waitFor } from './test-support';

const GUIDANCE_1S =
  'Command timed out after 1 seconds. If this command is expected to take longer, re-run with a higher timeout (e.g., exec timeout=300).';

describe('process poll: timeout input, retryInMs, timed-out sessions', () => {
  const { registry, events } = makeRegistry();
  afterAll(() => registry.shutdown());
  const call = (input: Parameters<typeof registry.process>[1], scope = 'p') => registry.process(scope, input, CONFIG);
  const background = async (command: string, extra: Record<string, unknown> = {}, scope = 'p') =>
    details(await registry.exec(scope, { command, background: true, ...extra }, CONFIG)).sessionId;
  const exitedEvent = (id: string) => events.find((e) => e.type === 'shell.exited' && e.data.sessionId === id)?.data as ShellExitedData;

  it('waits for output with timeout as an integer string, like a number', async () => {
    const id = await background('sleep 0.3; echo late; sleep 30');
    const started = Date.now();
    const answer = await call({ action: 'poll', sessionId: id, timeout: '3000' });
    expect(answer.text).toBe('late\n\nProcess still running.');
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    const quiet = Date.now();
    expect((await call({ action: 'poll', sessionId: id, timeout: ' 300 ' })).text).toBe('(no new output)\n\nProcess still running.');
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(250);
    await call({ action: 'kill', sessionId: id });
  });

  it('refuses a timeout that is neither a number nor an integer string, naming the tool and the field', async () => {
    const id = await background('sleep 30');
    for (const timeout of ['soon', '3.5', '', true, null, { ms: 1 }, ['1']]) {
      const attempt = registry.process('p', { action: 'poll', sessionId: id, timeout } as never, CONFIG, {
        processCallable: 'process_ab12cd34',
      });
      await expect(attempt).rejects.toThrow(ProcessInputError);
      await expect(attempt).rejects.toThrow(
        'Invalid process_ab12cd34 input: timeout: must be a number of milliseconds or an integer string',
      );
    }
    await expect(call({ action: 'list', timeout: 'x' })).rejects.toThrow(
      'Invalid process input: timeout: must be a number of milliseconds or an integer string',
    );
    await call({ action: 'kill', sessionId: id });
  });

  it('clamps the wait to 30000 ms and answers an unknown id at once whatever the timeout', async () => {
    expect([45_000, '99999', ' 2500 ', '+7', 12.7, -5, '-5'].map(pollWaitMs)).toEqual([30_000, 30_000, 2500, 7, 12, 0, 0]);
    const started = Date.now();
    expect((await call({ action: 'poll', sessionId: 'ghost', timeout: '99999' })).text).toBe('No session found for ghost');
    expect(Date.now() - started).toBeLessThan(200);
    const id = await background('sleep 30');
    const quick = Date.now();
    expect((await call({ action: 'poll', sessionId: id, timeout: '-5' })).text).toBe('(no new output)\n\nProcess still running.');
    expect(Date.now() - quick).toBeLessThan(200);
    await call({ action: 'kill', sessionId: id });
  });

  it('tells consecutive quiet polls to back off 5000, 10000, 30000, then 60000 ms; new output starts over', async () => {
    const id = await background('echo one; read go; echo two; sleep 30');
    const first = await call({ action: 'poll', sessionId: id, timeout: 2000 });
    expect(first.text).toBe('one\n\nProcess still running.');
    expect(details(first).retryInMs).toBeUndefined();
    const hints: unknown[] = [];
    for (let i = 0; i < 5; i += 1) {
      const quiet = await call({ action: 'poll', sessionId: id });
      expect(quiet.text).toBe('(no new output)\n\nProcess still running.');
      hints.push(details(quiet).retryInMs);
    }
    expect(hints).toEqual([5000, 10000, 30000, 60000, 60000]);
    // `log` reads the output without taking it from the next poll and does not count as a poll.
    expect(details(await call({ action: 'log', sessionId: id })).retryInMs).toBeUndefined();
    await call({ action: 'write', sessionId: id, data: 'x\n' });
    const fresh = await call({ action: 'poll', sessionId: id, timeout: 2000 });
    expect(fresh.text).toBe('two\n\nProcess still running.');
    expect(details(fresh).retryInMs).toBeUndefined();
    expect(details(await call({ action: 'poll', sessionId: id })).retryInMs).toBe(5000);
    expect(details(await call({ action: 'poll', sessionId: id })).retryInMs).toBe(10000);
    await call({ action: 'kill', sessionId: id });
    // A finished session is told it exited, not when to poll again.
    const { answer } = await pollUntilExit(registry, 'p', id);
    expect(details(answer).retryInMs).toBeUndefined();
  });

  it('keeps each session its own backoff', async () => {
    const a = await background('sleep 30');
    const b = await background('sleep 30');
    await call({ action: 'poll', sessionId: a });
    await call({ action: 'poll', sessionId: a });
    expect(details(await call({ action: 'poll', sessionId: b })).retryInMs).toBe(5000);
    expect(details(await call({ action: 'poll', sessionId: a })).retryInMs).toBe(30000);
    await call({ action: 'kill', sessionId: a });
    await call({ action: 'kill', sessionId: b });
  });

  it('answers a foreground command ended by its timeout with the exact guidance', async () => {
    const answer = await registry.exec('p', { command: 'sleep 30', timeoutSeconds: 1 }, CONFIG);
    expect(answer.text).toBe(`(no output)\n\n${GUIDANCE_1S}`);
    expect(details(answer)).toMatchObject({ status: 'failed', timedOut: true });
  });

  it('polls and logs a session ended by its timeout as timed out, with the guidance', async () => {
    const id = await background('sleep 30', { timeoutSeconds: 1 });
    const { answer } = await pollUntilExit(registry, 'p', id, 4000);
    expect(answer.text).toBe(`(no new output)\n\nProcess exited with timeout.\n\n${GUIDANCE_1S}`);
    expect(details(answer)).toMatchObject({ status: 'failed', sessionId: id, timedOut: true });
    const log = await call({ action: 'log', sessionId: id });
    expect(log.text).toBe(GUIDANCE_1S);
    expect(details(log)).toMatchObject({ status: 'failed', timedOut: true });
    expect((await call({ action: 'poll', sessionId: id })).text).toBe(`(no new output)\n\nProcess exited with timeout.\n\n${GUIDANCE_1S}`);
    expect(exitedEvent(id)).toMatchObject({ timedOut: true, timeoutSeconds: 1 });
  });

  it('keeps the output of a timed-out session in its log, the guidance after it', async () => {
    const id = await background('echo partial; sleep 30', { timeoutSeconds: 1 });
    const { text } = await pollUntilExit(registry, 'p', id, 4000);
    expect(text).toContain(`Process exited with timeout.\n\n${GUIDANCE_1S}`);
    expect((await call({ action: 'log', sessionId: id })).text).toBe(`partial\n\n${GUIDANCE_1S}`);
  });

  it('recognises a timeout whose command reports an exit code, as a confined command killed by a signal does (128+N)', async () => {
    // The command turns SIGTERM into `exit 143`: no signal is reported, only the code.
    const id = await background("trap 'exit 143' TERM; sleep 30 & wait", { timeoutSeconds: 1 });
    const { answer } = await pollUntilExit(registry, 'p', id, 4000);
    expect(details(answer)).toMatchObject({ status: 'failed', timedOut: true, exitCode: 143 });
    expect(details(answer).exitSignal).toBeUndefined();
    expect(answer.text).toBe(`(no new output)\n\nProcess exited with timeout.\n\n${GUIDANCE_1S}`);
    // Not a timeout: the same exit code on its own is just a code.
    const plain = await background('exit 143');
    expect((await pollUntilExit(registry, 'p', plain)).answer.text).toBe('(no new output)\n\nProcess exited with code 143.');
  });

  it('answers the same for a command confined in bubblewrap', async () => {
    const etcDir = writeSandboxEtc();
    const limits = {
      maxProcesses: 32,
      memoryBytes: 256 * 1024 * 1024,
      maxFileBytes: 1024 * 1024,
      openFiles: 1024,
      tmpBytes: 8 * 1024 * 1024,
    };
    const confined = makeRegistry({ sandbox: { bwrapPath: '/usr/bin/bwrap', prlimitPath: '/usr/bin/prlimit', etcDir, limits } });
    const confinement: Confinement = { kind: 'bwrap', identity: process.getuid?.() === 0 ? { uid: 231_003, gid: 231_003 } : null };
    try {
      const fg = await confined.registry.exec('c', { command: 'sleep 30', timeoutSeconds: 1 }, CONFIG, { confinement });
      expect(fg.text).toContain(GUIDANCE_1S);
      expect(details(fg)).toMatchObject({ status: 'failed', timedOut: true });
      const id = details(
        await confined.registry.exec('c', { command: 'echo hi; sleep 30', timeoutSeconds: 1, background: true }, CONFIG, { confinement }),
      ).sessionId;
      const { answer } = await pollUntilExit(confined.registry, 'c', id, 4000);
      expect(answer.text).toMatch(
        /Process exited with timeout\.\n\nCommand timed out after 1 seconds\. If this command is expected to take longer, re-run with a higher timeout \(e\.g\., exec timeout=300\)\.$/,
      );
      expect(details(answer)).toMatchObject({ status: 'failed', timedOut: true });
      expect((await confined.registry.process('c', { action: 'log', sessionId: id }, CONFIG)).text).toBe(`hi\n\n${GUIDANCE_1S}`);
    } finally {
      await confined.registry.shutdown();
      rmSync(etcDir, { recursive: true, force: true });
    }
  });

  it('answers the same for a timed-out session rebuilt from the log after its worker is gone', async () => {
    const id = await background('echo before; sleep 30', { timeoutSeconds: 1 });
    const silent = await background('sleep 30', { timeoutSeconds: 1 });
    await pollUntilExit(registry, 'p', id, 4000);
    await pollUntilExit(registry, 'p', silent, 4000);
    await waitFor(() => exitedEvent(id) !== undefined && exitedEvent(silent) !== undefined);
    const sessions = rebuildSessions(
      events.filter((e) => e.data.scope === 'p'),
      { isOwnerAlive: () => false },
    );
    const poll = await answerFromHistory('p', { action: 'poll', sessionId: id }, sessions, CONFIG);
    expect(poll.text).toBe(`before\n\nProcess exited with timeout.\n\n${GUIDANCE_1S}`);
    expect(details(poll)).toMatchObject({ status: 'failed', timedOut: true });
    expect((await answerFromHistory('p', { action: 'log', sessionId: id }, sessions, CONFIG)).text).toBe(`before\n\n${GUIDANCE_1S}`);
    expect((await answerFromHistory('p', { action: 'log', sessionId: silent }, sessions, CONFIG)).text).toBe(GUIDANCE_1S);
    const list = await answerFromHistory('p', { action: 'list' }, sessions, CONFIG);
    expect(details(list).sessions.find((s) => s.sessionId === id)).toMatchObject({ status: 'failed', timedOut: true });
  });

  it('names the timeout of a log written before it was recorded from the session duration', async () => {
    const started: ShellEvent = {
      type: 'shell.started',
      data: {
        sessionId: 'old-one',
        scope: 'o',
        command: 'sleep 99',
        cwd: '/workspace',
        pid: 1,
        pty: false,
        startedAt: 1_000,
        backgrounded: true,
      },
    };
    const exited = {
      type: 'shell.exited',
      data: {
        sessionId: 'old-one',
        scope: 'o',
        status: 'failed',
        exitCode: null,
        exitSignal: 'SIGTERM',
        timedOut: true,
        startedAt: 1_000,
        endedAt: 6_020,
        durationMs: 5_020,
        backgrounded: true,
        droppedChars: 0,
      },
    };
    const sessions = rebuildSessions([started, exited], { isOwnerAlive: () => false });
    const poll = await answerFromHistory('o', { action: 'poll', sessionId: 'old-one' }, sessions, CONFIG);
    expect(poll.text).toBe(
      '(no new output)\n\nProcess exited with timeout.\n\nCommand timed out after 5 seconds. If this command is expected to take longer, re-run with a higher timeout (e.g., exec timeout=300).',
    );
  });
});

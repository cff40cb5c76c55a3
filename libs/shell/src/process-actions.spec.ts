import { CONFIG, details, makeRegistry, pollUntilExit, waitFor } from './test-support';

const ERR = { status: 'failed' };

describe('ProcessRegistry.process', () => {
  const { registry, events } = makeRegistry();
  afterAll(() => registry.shutdown());
  const call = (input: Parameters<typeof registry.process>[1], scope = 's') => registry.process(scope, input, CONFIG);
  const background = async (command: string, extra: Record<string, unknown> = {}, scope = 's') =>
    details(await registry.exec(scope, { command, background: true, ...extra }, CONFIG)).sessionId;

  it('answers every input error with its exact text', async () => {
    expect(await call({ action: 'nope' })).toEqual({
      text: 'Invalid process action. Expected one of: list, poll, log, write, send-keys, submit, paste, kill, clear, remove',
      details: ERR,
    });
    expect(await call({ action: 'poll' })).toEqual({ text: 'sessionId is required for this action.', details: ERR });
    expect(await call({ action: 'log', sessionId: 'ghost' })).toEqual({ text: 'No session found for ghost', details: ERR });
    expect(await call({ action: 'remove', sessionId: 'ghost' })).toEqual({ text: 'No session found for ghost', details: ERR });
    for (const action of ['write', 'send-keys', 'submit', 'paste', 'kill']) {
      expect(await call({ action, sessionId: 'ghost' })).toEqual({ text: 'No active session found for ghost', details: ERR });
    }
    expect(await call({ action: 'clear', sessionId: 'ghost' })).toEqual({ text: 'No finished session found for ghost', details: ERR });
  });

  it('answers an unknown id at once, never after the poll timeout', async () => {
    const started = Date.now();
    expect((await call({ action: 'poll', sessionId: 'ghost', timeout: 5000 })).text).toBe('No session found for ghost');
    expect(Date.now() - started).toBeLessThan(200);
  });

  it('refuses actions on a session that is still in the foreground', async () => {
    const pending = registry.exec('fg', { command: 'sleep 0.5', yieldMs: 5000 }, CONFIG);
    await waitFor(() => events.some((e) => e.type === 'shell.started' && e.data.scope === 'fg'));
    const id = events.find((e) => e.type === 'shell.started' && e.data.scope === 'fg')!.data.sessionId;
    for (const action of ['poll', 'log', 'write', 'kill', 'remove']) {
      expect(await call({ action, sessionId: id }, 'fg')).toEqual({ text: `Session ${id} is not backgrounded.`, details: ERR });
    }
    expect((await call({ action: 'list' }, 'fg')).text).toBe('No running or recent sessions.');
    expect(details(await pending).status).toBe('completed');
  });

  it('refuses stdin input to a command whose stdin is closed', async () => {
    const answer = await registry.exec('s', { command: 'sleep 2', yieldMs: 10 }, CONFIG);
    const id = details(answer).sessionId;
    expect(await call({ action: 'write', sessionId: id, data: 'x' })).toEqual({
      text: `Session ${id} stdin is not writable.`,
      details: ERR,
    });
    await call({ action: 'kill', sessionId: id });
  });

  it('lists sessions newest first with their fields', async () => {
    const scope = 'listing';
    expect(await call({ action: 'list' }, scope)).toEqual({
      text: 'No running or recent sessions.',
      details: { status: 'completed', sessions: [] },
    });
    const done = await background('echo old', {}, scope);
    await waitFor(async () => details(await call({ action: 'list' }, scope)).sessions[0]?.status === 'completed');
    const running = await background('sleep 5', {}, scope);
    const list = await call({ action: 'list' }, scope);
    const [first, second] = details(list).sessions;
    expect(first).toMatchObject({
      sessionId: running,
      status: 'running',
      command: 'sleep 5',
      name: 'sleep 5',
      stdinWritable: true,
      waitingForInput: false,
      truncated: false,
    });
    expect(first).toEqual(
      expect.objectContaining({
        pid: expect.any(Number),
        startedAt: expect.any(Number),
        runtimeMs: expect.any(Number),
        idleMs: expect.any(Number),
        lastOutputAt: expect.any(Number),
        cwd: expect.any(String),
        tail: '',
      }),
    );
    expect(second).toMatchObject({ sessionId: done, status: 'completed', exitCode: 0, tail: 'old\n', endedAt: expect.any(Number) });
    expect(list.text.split('\n')[0]).toMatch(new RegExp(`^${running} running\\s+\\d+ms :: sleep 5$`));
    await call({ action: 'kill', sessionId: running }, scope);
  });

  it('polls new output only, then the exit', async () => {
    const id = await background('echo one; sleep 0.3; echo two; exit 4');
    const first = await call({ action: 'poll', sessionId: id, timeout: 2000 });
    expect(first.text).toBe('one\n\nProcess still running.');
    expect(details(first)).toMatchObject({
      status: 'running',
      sessionId: id,
      name: 'echo one;',
      stdinWritable: true,
      waitingForInput: false,
    });
    const empty = await call({ action: 'poll', sessionId: id });
    expect(empty.text).toBe('(no new output)\n\nProcess still running.');
    const { answer } = await pollUntilExit(registry, 's', id);
    expect(answer.text).toMatch(/Process exited with code 4\.$/);
    expect(details(answer)).toMatchObject({ status: 'completed', exitCode: 4, aggregated: 'one\ntwo\n' });
    expect((await call({ action: 'poll', sessionId: id })).text).toBe('(no new output)\n\nProcess exited with code 4.');
  });

  it('pages the log by lines with the 200-line default', async () => {
    const id = await background('seq 1 201');
    await pollUntilExit(registry, 's', id);
    const tail = await call({ action: 'log', sessionId: id });
    const lines = tail.text.split('\n');
    expect(lines[0]).toBe('2');
    expect(lines[199]).toBe('201');
    expect(tail.text.endsWith('\n\n[showing last 200 of 201 lines; pass offset/limit to page]')).toBe(true);
    expect(details(tail)).toMatchObject({ status: 'completed', totalLines: 201, truncated: false });
    expect((await call({ action: 'log', sessionId: id, offset: 0, limit: 3 })).text).toBe('1\n2\n3');
    expect((await call({ action: 'log', sessionId: id, offset: 199 })).text).toBe('200\n201');
    expect((await call({ action: 'log', sessionId: id, limit: 2 })).text).toBe('200\n201');
  });

  it('writes to stdin and closes it (cat)', async () => {
    const id = await background('cat');
    expect(await call({ action: 'write', sessionId: id, data: 'héllo\n' })).toEqual({
      text: `Wrote 7 bytes to session ${id}.`,
      details: { status: 'running', sessionId: id, name: 'cat' },
    });
    expect((await call({ action: 'write', sessionId: id, data: 'bye\n', eof: true })).text).toBe(
      `Wrote 4 bytes to session ${id} (stdin closed).`,
    );
    const { answer } = await pollUntilExit(registry, 's', id);
    expect(details(answer)).toMatchObject({ status: 'completed', exitCode: 0 });
    // The whole output, however the polls happened to split it.
    expect((await call({ action: 'log', sessionId: id })).text).toBe('héllo\nbye');
  });

  it('sends keys, submits and pastes', async () => {
    const id = await background('od -An -c');
    expect((await call({ action: 'send-keys', sessionId: id, keys: ['Up', 'C-a'], hex: ['41'], literal: 'x' })).text).toBe(
      `Sent 6 bytes to session ${id}.`,
    );
    expect(await call({ action: 'send-keys', sessionId: id, keys: [] })).toEqual({ text: 'No key data provided.', details: ERR });
    expect((await call({ action: 'submit', sessionId: id })).text).toBe(`Submitted session ${id} (sent CR).`);
    expect((await call({ action: 'paste', sessionId: id, text: 'pp' })).text).toBe(`Pasted 2 chars to session ${id}.`);
    expect((await call({ action: 'paste', sessionId: id, text: 'qq', bracketed: false })).text).toBe(`Pasted 2 chars to session ${id}.`);
    expect(await call({ action: 'paste', sessionId: id })).toEqual({ text: 'No paste text provided.', details: ERR });
    await call({ action: 'write', sessionId: id, eof: true });
    const { text } = await pollUntilExit(registry, 's', id);
    const bytes = text.replace(/\s+/g, ' ');
    expect(bytes).toContain('x A 033 [ A 001 \\r 033 [ 2 0 0 ~ p p 033 [ 2 0 1 ~ q q');
  });

  it('kills, clears and removes', async () => {
    const id = await background('sleep 30');
    expect(await call({ action: 'clear', sessionId: id })).toEqual({ text: `No finished session found for ${id}`, details: ERR });
    expect(await call({ action: 'kill', sessionId: id })).toEqual({
      text: `Termination requested for session ${id}.`,
      details: { status: 'completed', sessionId: id, name: 'sleep 30' },
    });
    const { answer } = await pollUntilExit(registry, 's', id);
    expect(answer.text).toBe('(no new output)\n\nProcess exited with signal SIGTERM.');
    expect(details(answer)).toMatchObject({ status: 'failed', exitSignal: 'SIGTERM' });
    expect(await call({ action: 'clear', sessionId: id })).toEqual({
      text: `Cleared session ${id}.`,
      details: { status: 'completed', sessionId: id },
    });
    expect((await call({ action: 'poll', sessionId: id })).text).toBe(`No session found for ${id}`);

    const running = await background('sleep 30');
    expect((await call({ action: 'remove', sessionId: running })).text).toBe(`Removed session ${running} (termination requested).`);
    expect((await call({ action: 'poll', sessionId: running })).text).toBe(`No session found for ${running}`);
    const finished = await background('true');
    await pollUntilExit(registry, 's', finished);
    expect((await call({ action: 'remove', sessionId: finished })).text).toBe(`Removed session ${finished}.`);
    expect(details(await call({ action: 'list' })).sessions.map((s) => s.sessionId)).not.toContain(finished);
  });

  it('keeps agents apart', async () => {
    const id = await background('sleep 5', {}, 'agent-1');
    expect(details(await call({ action: 'list' }, 'agent-2')).sessions).toEqual([]);
    expect((await call({ action: 'poll', sessionId: id }, 'agent-2')).text).toBe(`No session found for ${id}`);
    expect((await call({ action: 'kill', sessionId: id }, 'agent-2')).text).toBe(`No active session found for ${id}`);
    expect(details(await call({ action: 'list' }, 'agent-1')).sessions).toHaveLength(1);
    await call({ action: 'kill', sessionId: id }, 'agent-1');
  });

  it('hints that a quiet session with open stdin may be waiting for input', async () => {
    const config = { ...CONFIG, inputWaitIdleMs: 100 };
    const id = details(await registry.exec('w', { command: 'read line; echo got $line', background: true }, config)).sessionId;
    await new Promise((r) => setTimeout(r, 150));
    const poll = await registry.process('w', { action: 'poll', sessionId: id }, config, { processCallable: 'process_ab12' });
    expect(poll.text).toMatch(
      /^\(no new output\)\n\nProcess still running\.\n\nNo new output for \d+ms; this session may be waiting for input\. Use process_ab12 write, send-keys, submit, or paste to provide input\.$/,
    );
    expect(details(poll)).toMatchObject({ stdinWritable: true, waitingForInput: true });
    const list = await registry.process('w', { action: 'list' }, config);
    expect(details(list).sessions[0]).toMatchObject({ waitingForInput: true });
    expect(list.text).toContain('[input-wait]');
    await registry.process('w', { action: 'write', sessionId: id, data: 'it\n' }, config);
    const { text } = await pollUntilExit(registry, 'w', id);
    expect(text).toContain('got it');
  });

  it('caps the aggregate (newest kept) and the pending output (oldest dropped)', async () => {
    const config = { ...CONFIG, maxOutputChars: 1000, pendingMaxOutputChars: 1000 };
    const id = details(await registry.exec('cap', { command: 'printf "%01500d" 0; printf END', background: true }, config)).sessionId;
    await waitFor(async () => details(await registry.process('cap', { action: 'list' }, config)).sessions[0].status !== 'running');
    const log = await registry.process('cap', { action: 'log', sessionId: id }, config);
    expect(log.text).toBe(`[earlier output was dropped; only the newest 1000 chars are kept]\n\n${'0'.repeat(997)}END`);
    expect(details(log).truncated).toBe(true);
    const poll = await registry.process('cap', { action: 'poll', sessionId: id }, config);
    expect(poll.text).toContain(
      '[earlier output is omitted from this poll; use action=log with offset and limit to inspect retained output]',
    );
    expect(poll.text).toContain(`${'0'.repeat(997)}END\n\nProcess exited with code 0.`);
  });
});

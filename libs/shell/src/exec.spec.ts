import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { CONFIG, details, makeRegistry, outputEvents, pollUntilExit } from './test-support';

const RUNNING_TEXT =
  /^Command still running \(session ([a-z0-9-]+), pid (\d+)\)\. Use process \(list\/poll\/log\/write\/send-keys\/submit\/paste\/kill\/clear\/remove\) for follow-up\.$/;

describe('ProcessRegistry.exec', () => {
  const { registry, events, workspaceRoot } = makeRegistry();
  afterAll(() => registry.shutdown());

  it('runs a foreground command with OPENCLAW_SHELL and the request env', async () => {
    const answer = await registry.exec('a', { command: 'echo "$OPENCLAW_SHELL $GREETING"; pwd', env: { GREETING: 'hi' } }, CONFIG);
    expect(answer.text).toBe(`exec hi\n${workspaceRoot}`);
    expect(details(answer)).toMatchObject({
      status: 'completed',
      exitCode: 0,
      aggregated: `exec hi\n${workspaceRoot}`,
      cwd: workspaceRoot,
    });
    expect(typeof details(answer).durationMs).toBe('number');
  });

  it('adds the exit code of a failing command to the text', async () => {
    const answer = await registry.exec('a', { command: 'echo oops >&2; exit 3' }, CONFIG);
    expect(answer.text).toBe('oops\n\n(Command exited with code 3)');
    expect(details(answer)).toMatchObject({ exitCode: 3 });
  });

  it('answers (no output) and a failed status for a missing command', async () => {
    const answer = await registry.exec('a', { command: 'definitely-not-a-command-xyz' }, CONFIG);
    expect(details(answer)).toMatchObject({ status: 'failed', exitCode: 127 });
    expect(answer.text).toContain('(Command exited with code 127)');
    expect(answer.text).toContain('Command not found');
  });

  it('backgrounds a command still running after yieldMs', async () => {
    const answer = await registry.exec('a', { command: 'echo first; sleep 0.4; echo second', yieldMs: 100 }, CONFIG);
    const match = RUNNING_TEXT.exec(answer.text);
    expect(match).not.toBeNull();
    expect(details(answer)).toMatchObject({ status: 'running', sessionId: match![1], pid: Number(match![2]), tail: 'first\n' });
    expect(typeof details(answer).startedAt).toBe('number');
    const { text, answer: final } = await pollUntilExit(registry, 'a', match![1]);
    expect(text).toContain('second');
    expect(final.text).toMatch(/\n\nProcess exited with code 0\.$/);
    expect(details(final)).toMatchObject({ status: 'completed', sessionId: match![1], exitCode: 0 });
  });

  it('clamps yieldMs to at least 10 ms and starts background commands at once', async () => {
    const started = Date.now();
    const answer = await registry.exec('a', { command: 'sleep 0.3', yieldMs: 0 }, CONFIG);
    expect(details(answer).status).toBe('running');
    const bg = await registry.exec('a', { command: 'sleep 0.3', background: true }, CONFIG);
    expect(bg.text).toMatch(RUNNING_TEXT);
    expect(Date.now() - started).toBeLessThan(250);
  });

  it('refuses awaitResults with background', async () => {
    const answer = await registry.exec('a', { command: 'true', background: true, awaitResults: true }, CONFIG);
    expect(answer.details).toEqual({ status: 'failed' });
    expect(answer.text).toContain('cannot be detached');
  });

  it('refuses elevated exec, and hosts it cannot run on, before anything runs', async () => {
    const marker = path.join(workspaceRoot, 'ran');
    const refused = [
      [{ elevated: true }, 'elevated exec is not available in this service.'],
      [{ host: 'node', node: 'laptop' }, 'unknown node: laptop'],
      [{ host: 'mainframe' }, 'host must be one of auto, sandbox, gateway or node; got "mainframe".'],
    ] as const;
    for (const [extra, text] of refused) {
      const answer = await registry.exec('a', { command: `touch ${marker}`, ...extra }, CONFIG);
      expect(answer).toEqual({ text, details: { status: 'failed' } });
    }
    expect(existsSync(marker)).toBe(false);
    for (const host of ['auto', 'sandbox', 'gateway']) {
      expect((await registry.exec('a', { command: 'echo here', host }, CONFIG)).text).toBe('here');
    }
  });

  it('awaitResults never yields', async () => {
    const answer = await registry.exec('a', { command: 'sleep 0.2; echo done', yieldMs: 10, awaitResults: true }, CONFIG);
    expect(answer.text).toBe('done');
  });

  it('resolves workdir inside the workspace and refuses one outside', async () => {
    mkdirSync(path.join(workspaceRoot, 'sub'));
    const inside = await registry.exec('a', { command: 'pwd', workdir: 'sub' }, CONFIG);
    expect(inside.text).toBe(path.join(workspaceRoot, 'sub'));
    const outside = await registry.exec('a', { command: 'pwd', workdir: '../..' }, CONFIG);
    expect(outside).toEqual({ text: `workdir "../.." is outside the workspace ${workspaceRoot}.`, details: { status: 'failed' } });
    const absolute = await registry.exec('a', { command: 'pwd', workdir: '/etc' }, CONFIG);
    expect(absolute.text).toContain('is outside the workspace');
    const missing = await registry.exec('a', { command: 'pwd', workdir: 'nope' }, CONFIG);
    expect(missing.text).toBe('workdir "nope" is not a directory.');
  });

  it('creates a missing workspace root', async () => {
    const root = path.join(workspaceRoot, 'fresh', 'root');
    const answer = await registry.exec('a', { command: 'pwd' }, CONFIG, { workspaceRoot: root });
    expect(answer.text).toBe(root);
  });

  it('refuses an empty command', async () => {
    expect(await registry.exec('a', { command: '  ' }, CONFIG)).toEqual({
      text: 'Provide a command to start.',
      details: { status: 'failed' },
    });
  });

  it('inside a cell yields after a quarter of the remaining budget and names the callable', async () => {
    const started = Date.now();
    const answer = await registry.exec('a', { command: 'sleep 1' }, CONFIG, {
      insideCell: { remainingBudgetMs: 400, processCallable: 'process_ab12' },
    });
    expect(Date.now() - started).toBeLessThan(600);
    expect(answer.text).toMatch(/^Command still running \(session [a-z0-9-]+, pid \d+\)\. Use process_ab12 \(list\/poll/);
    // Tiny budgets still wait at least 1 ms; an explicit yieldMs is clamped as usual.
    const quick = await registry.exec('a', { command: 'echo fast' }, CONFIG, {
      insideCell: { remainingBudgetMs: 20_000, processCallable: 'process_ab12' },
    });
    expect(quick.text).toBe('fast');
  });

  it('gives a command run from a cell its callKey as CODEMODE_CALL_KEY, whatever the request env says (SPEC §16)', async () => {
    const answer = await registry.exec('a', { command: 'echo "[$CODEMODE_CALL_KEY]"', env: { CODEMODE_CALL_KEY: 'forged' } }, CONFIG, {
      insideCell: { remainingBudgetMs: 20_000, processCallable: 'process_ab12', callKey: 'run_1:3' },
    });
    expect(answer.text).toBe('[run_1:3]');
    expect((await registry.exec('a', { command: 'echo "[${CODEMODE_CALL_KEY-unset}]"' }, CONFIG)).text).toBe('[unset]');
  });

  it('reports started, output and exited events', async () => {
    events.length = 0;
    const answer = await registry.exec('ev', { command: 'printf abc; printf err >&2' }, CONFIG);
    expect(answer.text).toBe('abcerr');
    const started = events.find((e) => e.type === 'shell.started')!;
    expect(started.data).toMatchObject({ scope: 'ev', command: 'printf abc; printf err >&2', backgrounded: false, pty: false });
    expect(
      outputEvents(events)
        .map((o) => `${o.stream}:${o.text}`)
        .sort(),
    ).toEqual(['stderr:err', 'stdout:abc']);
    const exited = events.find((e) => e.type === 'shell.exited')!;
    expect(exited.data).toMatchObject({
      status: 'completed',
      exitCode: 0,
      exitSignal: null,
      timedOut: false,
      backgrounded: false,
      droppedChars: 0,
    });
    expect(exited).toMatchObject({ tail: 'abcerr' });
  });

  it('coalesces output events into chunks of at most 8 KiB', async () => {
    events.length = 0;
    await registry.exec('ev', { command: 'head -c 20000 /dev/zero | tr "\\0" x' }, CONFIG);
    const chunks = outputEvents(events).map((o) => o.text);
    expect(chunks.join('')).toHaveLength(20000);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(8192);
    expect(chunks.length).toBeLessThan(10);
  });
});

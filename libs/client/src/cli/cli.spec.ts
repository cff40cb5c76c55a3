import type { CodeModeResult } from '@codemode/contracts';
import { CodeModeClient } from '../codemode-client';
import { runCli } from './cli';
import type { CliIo } from './context';
import { Spinner } from './spinner';

const telemetry = {
  catalogSize: 0,
  sources: { openclaw: 0, mcp: 0, client: 0 },
  searchCount: 0,
  describeCount: 0,
  callCount: 0,
  counterScope: 'run',
  visibleTools: ['exec', 'wait'] as ['exec', 'wait'],
};
const waiting: CodeModeResult = {
  status: 'waiting',
  runId: 'cm_1',
  reason: 'yield',
  replaySafe: false,
  telemetry,
  output: [{ type: 'text', text: 'one' }],
};
const waitingAgain: CodeModeResult = { status: 'waiting', runId: 'cm_1', reason: 'yield', replaySafe: false, telemetry };
const done: CodeModeResult = { status: 'completed', value: 42, replaySafe: false, telemetry, output: [{ type: 'text', text: 'two' }] };

function fakeIo(files: Record<string, string> = {}): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: { write: (text: string) => (io.out += text) },
    stderr: { write: (text: string) => (io.err += text) },
    readStdin: async () => 'return 1',
    readFile: async (path: string) => {
      if (!(path in files)) throw new Error(`ENOENT: no such file, open '${path}'`);
      return files[path];
    },
    signal: new AbortController().signal,
  };
  return io;
}

describe('runCli (client stubbed)', () => {
  afterEach(() => jest.restoreAllMocks());

  it('follows waiting with wait until the run ends, printing a repeated note once', async () => {
    const exec = jest.spyOn(CodeModeClient.prototype, 'exec').mockResolvedValue(waiting);
    const wait = jest.spyOn(CodeModeClient.prototype, 'wait').mockResolvedValueOnce(waitingAgain).mockResolvedValueOnce(done);
    const io = fakeIo({ 'cell.js': 'code' });
    expect(await runCli(['exec', 'cell.js', '-s', 's1'], {}, io)).toBe(0);
    expect(exec).toHaveBeenCalledWith('s1', { title: 'cell.js', code: 'code' }, expect.anything());
    expect(wait).toHaveBeenCalledTimes(2);
    expect(io.out).toBe('one\ntwo\n42\n');
    expect(io.err).toBe('waiting (yield): run cm_1\n');
  });

  it('with --no-wait prints the runId and exits 0; with --json prints one line per answer', async () => {
    jest.spyOn(CodeModeClient.prototype, 'exec').mockResolvedValue(waiting);
    const wait = jest.spyOn(CodeModeClient.prototype, 'wait').mockResolvedValue(done);
    const io = fakeIo();
    expect(await runCli(['exec', '-', '--no-wait'], {}, io)).toBe(0);
    expect(io.out).toBe('one\ncm_1\n');
    expect(wait).not.toHaveBeenCalled();
    const json = fakeIo();
    expect(await runCli(['exec', '-', '--json'], {}, json)).toBe(0);
    expect(
      json.out
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as CodeModeResult).status),
    ).toEqual(['waiting', 'completed']);
  });

  it('exits 1 on a failed cell, an unreadable file, or a thrown client error', async () => {
    jest.spyOn(CodeModeClient.prototype, 'wait').mockResolvedValue({
      status: 'failed',
      error: 'code mode run is unavailable or expired.',
      failurePhase: 'input',
      bridgeDispatchStarted: false,
      replaySafe: false,
      telemetry,
    });
    const io = fakeIo();
    expect(await runCli(['wait', 'cm_9'], {}, io)).toBe(1);
    expect(io.err).toContain('code mode run is unavailable or expired.');
    const missing = fakeIo();
    expect(await runCli(['exec', 'nope.js'], {}, missing)).toBe(1);
    expect(missing.err).toContain('codemode: cannot read nope.js: ENOENT');
    const badTools = fakeIo({ 't.json': '{"x":1}' });
    expect(await runCli(['tools', 'put', 's', 't.json'], {}, badTools)).toBe(1);
    expect(badTools.err).toContain('t.json must hold {"tools": [...]} or an array of tools.');
  });

  it('exits 2 with the usage on stderr for a usage error, 0 with it on stdout for --help', async () => {
    const io = fakeIo();
    expect(await runCli(['events'], {}, io)).toBe(2);
    expect(io.err).toMatch(/^codemode: events needs <sid>\.\n\nUsage: codemode/);
    const help = fakeIo();
    expect(await runCli(['--help'], {}, help)).toBe(0);
    expect(help.out).toMatch(/^Usage: codemode/);
  });
});

describe('Spinner', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('draws elapsed seconds on a TTY after a second, and clears its line on stop', () => {
    let now = 0;
    const writes: string[] = [];
    const spinner = new Spinner({ isTTY: true, write: (text: string) => writes.push(text) }, () => now);
    spinner.start('waiting for cm_1', 0);
    now = 500;
    jest.advanceTimersByTime(100);
    expect(writes).toEqual([]);
    now = 2500;
    jest.advanceTimersByTime(100);
    expect(writes.at(-1)).toMatch(/waiting for cm_1 2s$/);
    spinner.stop();
    expect(writes.at(-1)).toBe('\r\x1b[2K');
  });

  it('writes nothing when the stream is not a TTY', () => {
    const writes: string[] = [];
    const spinner = new Spinner({ isTTY: false, write: (text: string) => writes.push(text) }, () => 10_000);
    spinner.start('x', 0);
    jest.advanceTimersByTime(5000);
    spinner.stop();
    expect(writes).toEqual([]);
  });
});

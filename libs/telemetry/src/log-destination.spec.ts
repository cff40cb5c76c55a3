import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchedLogDestination, LOG_BATCH_CHARS } from './log-destination';
import { createLogger } from './logger';

let dir: string;
let file: string;
let fd: number;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'log-destination-'));
  file = join(dir, 'out.log');
  fd = openSync(file, 'a');
});

afterEach(() => {
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

const written = (): string => readFileSync(file, 'utf8');

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !check();) {
    if (Date.now() > end) throw new Error(`not written within ${timeoutMs} ms; the file holds ${JSON.stringify(written())}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('BatchedLogDestination', () => {
  it('writes a line at once when none went out just before, and keeps the lines after it for its window', async () => {
    const destination = new BatchedLogDestination(fd, 60_000);
    destination.write('one\n');
    await until(() => written() === 'one\n');
    destination.write('two\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(written()).toBe('one\n');
    destination.flushSync();
    expect(written()).toBe('one\ntwo\n');
  });

  it("writes a window's lines at its end, in order", async () => {
    const destination = new BatchedLogDestination(fd, 30);
    for (const line of ['one', 'two', 'three']) destination.write(`${line}\n`);
    await until(() => written() === 'one\ntwo\nthree\n');
    destination.write('four\n');
    await until(() => written() === 'one\ntwo\nthree\nfour\n');
  });

  it('hands a full batch over without waiting for its window', async () => {
    const destination = new BatchedLogDestination(fd, 60_000);
    const line = `${'x'.repeat(99)}\n`;
    const lines = 1 + Math.ceil(LOG_BATCH_CHARS / line.length);
    for (let i = 0; i < lines; i += 1) destination.write(line);
    await until(() => written().length === lines * line.length);
    destination.write('last\n');
    destination.flushSync();
    expect(written().endsWith(`${line}last\n`)).toBe(true);
  });

  it('flushSync writes every line at once, those handed over first', () => {
    const destination = new BatchedLogDestination(fd, 60_000);
    destination.write('a'.repeat(LOG_BATCH_CHARS) + '\n');
    destination.write('waiting\n');
    destination.flushSync();
    expect(written()).toBe(`${'a'.repeat(LOG_BATCH_CHARS)}\nwaiting\n`);
  });

  it("is the logger's destination: JSON lines; a warning goes out at once with the lines before it", async () => {
    const logger = createLogger({ service: 'test', level: 'info', version: '1' }, new BatchedLogDestination(fd, 60_000));
    logger.info({ requestId: 'r-1' }, 'request');
    logger.info('waits for the window');
    logger.debug('not at this level');
    logger.warn('slow');
    await until(() => written().split('\n').length === 4);
    const lines = written()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'info', msg: 'request', requestId: 'r-1', service: 'test' }),
      expect.objectContaining({ level: 'info', msg: 'waits for the window' }),
      expect.objectContaining({ level: 'warn', msg: 'slow' }),
    ]);
    logger.info('after');
    logger.info('flushed');
    await new Promise<void>((resolve, reject) => logger.flush((err) => (err ? reject(err) : resolve())));
    await until(() => written().includes('"msg":"flushed"'));
  });
});

// A real process: the built logger (`npm test` builds before jest runs).
describe('a process that logs, then exits', () => {
  const logger = join(__dirname, '..', '..', '..', 'dist', 'libs', 'telemetry', 'src', 'logger.js');
  const run = (tail: string): string =>
    execFileSync(
      process.execPath,
      [
        '-e',
        `const { createLogger } = require(${JSON.stringify(logger)});
         const log = createLogger({ service: 'exit-test', level: 'info', version: '1' });
         for (let i = 0; i < 3; i += 1) log.info({ i }, 'line');
         ${tail}`,
      ],
      { encoding: 'utf8', timeout: 20_000 },
    );

  it.each([
    ['running out of work', ''],
    ['calling process.exit at once', 'process.exit(0);'],
    ['throwing', "process.on('uncaughtException', () => process.exit(1)); setImmediate(() => { throw new Error('boom'); });"],
  ])('writes every line before it exits, %s', (_how, tail) => {
    let out: string;
    try {
      out = run(tail);
    } catch (err) {
      out = (err as { stdout: string }).stdout;
    }
    const lines = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { i: number; msg: string });
    expect(lines.map((line) => [line.msg, line.i])).toEqual([
      ['line', 0],
      ['line', 1],
      ['line', 2],
    ]);
  });
});

import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchedLogDestination, LOG_BATCH_CHARS } from './log-destination';
import { createLogger } from './logger';

let dir: string;
let file: string;
let fd: number;
let made: BatchedLogDestination[] = [];

/** A destination on this test's file; written out and its window closed after the test. */
function destination(batchMs: number): BatchedLogDestination {
  const out = new BatchedLogDestination(fd, batchMs);
  made.push(out);
  return out;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'log-destination-'));
  file = join(dir, 'out.log');
  fd = openSync(file, 'a');
});

afterEach(() => {
  for (const one of made) one.flushSync();
  made = [];
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
    const out = destination(60_000);
    out.write('one\n');
    await until(() => written() === 'one\n');
    out.write('two\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(written()).toBe('one\n');
    out.flushSync();
    expect(written()).toBe('one\ntwo\n');
  });

  it("writes a window's lines at its end, in order", async () => {
    const out = destination(1500);
    for (const line of ['one', 'two', 'three']) out.write(`${line}\n`);
    await until(() => written() !== '');
    expect(written()).toBe('one\n');
    await until(() => written() === 'one\ntwo\nthree\n');
  });

  it('hands a full batch over without waiting for its window', async () => {
    const out = destination(60_000);
    const line = `${'x'.repeat(99)}\n`;
    const lines = 1 + Math.ceil(LOG_BATCH_CHARS / line.length);
    for (let i = 0; i < lines; i += 1) out.write(line);
    await until(() => written().length === lines * line.length);
    out.write('last\n');
    out.flushSync();
    expect(written().endsWith(`${line}last\n`)).toBe(true);
  });

  it('flushSync writes every line at once, those handed over first', async () => {
    const out = destination(60_000);
    out.write('a'.repeat(LOG_BATCH_CHARS) + '\n');
    await until(() => written() !== '');
    out.write('waiting\n');
    out.flushSync();
    expect(written()).toBe(`${'a'.repeat(LOG_BATCH_CHARS)}\nwaiting\n`);
  });

  it("is the logger's destination: JSON lines; a warning goes out at once with the lines before it", async () => {
    const logger = createLogger({ service: 'test', level: 'info', version: '1' }, destination(60_000));
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

// A real process, on the built library (`npm test` builds before jest runs). Its first line goes out
// at once and lands; the next two are logged 200 ms later, in a window, so they are still waiting
// when the process ends: only the way it ends writes them.
describe('a process that logs, then exits', () => {
  const built = join(__dirname, '..', '..', '..', 'dist', 'libs', 'telemetry', 'src');
  const run = (windowMs: number, end: string): { status: number | null; stdout: string; stderr: string } =>
    spawnSync(
      process.execPath,
      [
        '-e',
        `const { createLogger } = require(${JSON.stringify(join(built, 'logger.js'))});
         const { BatchedLogDestination } = require(${JSON.stringify(join(built, 'log-destination.js'))});
         const log = createLogger({ service: 'exit-test', level: 'info', version: '1' }, new BatchedLogDestination(1, ${windowMs}));
         log.info({ i: 0 }, 'line');
         setTimeout(() => {
           log.info({ i: 1 }, 'line');
           log.info({ i: 2 }, 'line');
           ${end}
         }, 200);`,
      ],
      { encoding: 'utf8', timeout: 20_000 },
    );

  it.each([
    ['running out of work (its window ends)', 20, '', 0],
    ['calling process.exit at once', 60_000, 'process.exit(0);', 0],
    ['throwing', 60_000, "process.on('uncaughtException', () => process.exit(3)); throw new Error('boom');", 3],
  ])('writes every line before it exits, %s', (_how, windowMs, end, status) => {
    const child = run(windowMs, end);
    expect({ status: child.status, stderr: child.stderr }).toEqual({ status, stderr: '' });
    const lines = child.stdout
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

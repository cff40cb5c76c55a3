import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { PatternTooExpensiveError } from '../errors';
import type { MatchBudget } from './match-budget';

/**
 * Runs grep's regular expression on a worker thread, under the call's matching budget. re2js
 * matches in linear time, but the constant grows with the pattern: compiling `x{1,1000}` written
 * 300 times takes seconds, so does the first match of `\pL{1000}` written 200 times, and
 * `(a|b)*a(a|b){1000}$` spends about 30 µs per character, so one 16 MiB line would hold the event
 * loop for minutes. None of that can be interrupted on the main thread; on its own thread
 * the match can be stopped at any point: when the budget runs out the worker is terminated and the
 * call fails with `pattern too expensive`. A worker serves one call (no tenant waits on another's
 * pattern) and is ended by `close`.
 */

/** Worker body, plain JavaScript so it runs as written under ts-jest and in the build alike.
 * Requests: `{source, flags}` compiles; `{text, maxMatches}` answers the 0-based indexes of the
 * first matching lines, numbering lines as grep.ts does (split on `\n`, a final newline ending the
 * last line) without building them all. Each answer carries the milliseconds it spent. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { RE2JS } = require(workerData.re2jsPath);
let regex;
parentPort.on('message', (request) => {
  const started = performance.now();
  if (request.text === undefined) {
    try {
      regex = RE2JS.compile(request.source, request.flags);
      parentPort.postMessage({ ms: performance.now() - started });
    } catch (error) {
      parentPort.postMessage({ ms: performance.now() - started, compileError: String(error && error.message) });
    }
    return;
  }
  const { text, maxMatches } = request;
  const found = [];
  for (let start = 0, index = 0; start < text.length && found.length < maxMatches; index += 1) {
    let end = text.indexOf('\\n', start);
    if (end === -1) end = text.length;
    if (regex.test(text.slice(start, end))) found.push(index);
    start = end + 1;
  }
  parentPort.postMessage({ ms: performance.now() - started, found });
});
parentPort.postMessage({ ms: 0 });
`;

/** Heap of one worker: the text of a 16 MiB file plus RE2's program and DFA cache fit; a pattern
 * whose program does not fails the call as too expensive. */
const WORKER_HEAP_MB = 256;

interface Reply {
  readonly ms: number;
  readonly compileError?: string;
  readonly found?: number[];
}

export class RegexWorker {
  private constructor(
    private readonly worker: Worker,
    private readonly pattern: string,
    private readonly budget: MatchBudget,
  ) {
    // Failures reach the pending request through `once`; this keeps one arriving after the worker
    // was given up on from becoming an uncaught exception.
    worker.on('error', () => undefined);
  }

  /** Starts a worker for `pattern` (as the caller wrote it, for the error message). Loading re2js
   * costs the same for every pattern, so it is not charged to the budget. */
  static async start(pattern: string, budget: MatchBudget): Promise<RegexWorker> {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { re2jsPath: require.resolve('re2js') },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    try {
      await once(worker, 'message');
    } catch (error) {
      await worker.terminate();
      throw error;
    }
    return new RegexWorker(worker, pattern, budget);
  }

  /** Compiles the RE2 `source`; resolves with RE2's error message when it does not compile. */
  async compile(source: string, flags: number): Promise<string | undefined> {
    return (await this.request({ source, flags })).compileError;
  }

  /** 0-based indexes of the first `maxMatches` lines of `text` that match. */
  async matchingLines(text: string, maxMatches: number): Promise<number[]> {
    return (await this.request({ text, maxMatches })).found ?? [];
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  /**
   * Sends one request and waits for its answer no longer than the budget left; the time the worker
   * reports is charged (so message passing between many small files costs nothing).
   * @throws PatternTooExpensiveError when the deadline passes (the worker is terminated mid-match),
   * the answer spends the budget, or the worker runs out of heap.
   */
  private async request(message: object): Promise<Reply> {
    const deadlineMs = this.budget.remainingMs;
    if (deadlineMs <= 0) {
      throw new PatternTooExpensiveError(this.pattern);
    }
    const answer = once(this.worker, 'message') as Promise<[Reply]>;
    this.worker.postMessage(message);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), deadlineMs);
    });
    try {
      const outcome = await Promise.race([answer, expired]);
      if (outcome === 'expired') {
        await this.worker.terminate();
        throw new PatternTooExpensiveError(this.pattern);
      }
      const [reply] = outcome;
      this.budget.charge(this.pattern, reply.ms);
      return reply;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new PatternTooExpensiveError(this.pattern);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

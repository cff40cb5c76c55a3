import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { PatternTooExpensiveError } from '../errors';
import { GREP_MAX_LINE_CHARS } from './limits';
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
 * Requests: `{source, flags}` compiles; `{bytes, maxMatches, context, maxBytes}` searches a file's
 * bytes (an ArrayBuffer handed over, not copied): it decodes them and answers `{decoded: true}`
 * first, so the budget's deadline counts matching only, then the first `maxMatches` matching lines,
 * numbered as grep numbers them (split on `\n`, a final newline ending the last line), each with up
 * to `context` lines around it, every line without its `\r` and cut to `maxLineChars` characters.
 * It stops early once the lines it found hold more than `maxBytes` UTF-8 bytes (grep's output
 * budget left: the rest could not be shown). Decoding, splitting and cutting happen here, off the
 * event loop; the answer carries the milliseconds spent matching. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { RE2JS } = require(workerData.re2jsPath);
const maxLineChars = workerData.maxLineChars;
let regex;
const shown = (line, found) => {
  const clean = line.endsWith('\\r') ? line.slice(0, -1) : line;
  if (clean.length <= maxLineChars) return clean;
  found.cut = true;
  return clean.slice(0, maxLineChars) + '...';
};
parentPort.on('message', (request) => {
  if (request.bytes === undefined) {
    const started = performance.now();
    try {
      regex = RE2JS.compile(request.source, request.flags);
      parentPort.postMessage({ ms: performance.now() - started });
    } catch (error) {
      parentPort.postMessage({ ms: performance.now() - started, compileError: String(error && error.message) });
    }
    return;
  }
  const text = Buffer.from(request.bytes).toString('utf8');
  parentPort.postMessage({ decoded: true });
  const { maxMatches, context, maxBytes } = request;
  const found = [];
  const recent = [];
  let open = [];
  let bytes = 0;
  let ms = 0;
  for (let start = 0, index = 0; start < text.length; index += 1) {
    let end = text.indexOf('\\n', start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    for (const match of open) {
      const after = shown(line, match);
      match.after.push(after);
      bytes += Buffer.byteLength(after);
    }
    open = open.filter((match) => match.after.length < context);
    if (found.length < maxMatches && bytes <= maxBytes) {
      const started = performance.now();
      const matched = regex.test(line);
      ms += performance.now() - started;
      if (matched) {
        const match = { index, cut: false, before: [], after: [] };
        match.before = recent.map((previous) => shown(previous, match));
        match.text = shown(line, match);
        bytes += Buffer.byteLength(match.text) + match.before.reduce((sum, previous) => sum + Buffer.byteLength(previous), 0);
        found.push(match);
        if (context > 0) open.push(match);
      }
    } else if (open.length === 0) {
      break;
    }
    if (context > 0) {
      recent.push(line);
      if (recent.length > context) recent.shift();
    }
  }
  parentPort.postMessage({ ms, found });
});
parentPort.postMessage({ ms: 0 });
`;

/** Heap of one worker: the text of a 16 MiB file plus RE2's program and DFA cache fit; a pattern
 * whose program does not fails the call as too expensive. */
const WORKER_HEAP_MB = 256;

/** How long decoding one file (at most 16 MiB) may take on the worker before the call fails: far
 * more than it needs even on a loaded machine; not charged to the matching budget. */
const DECODE_DEADLINE_MS = 10_000;

/** A matching line as the worker answers it: 0-based index, the line and its context as grep shows
 * them, and whether any of them was cut. */
export interface FoundLine {
  readonly index: number;
  readonly text: string;
  readonly before: string[];
  readonly after: string[];
  readonly cut: boolean;
}

/** What one file's search asks for. */
export interface SearchRequest {
  /** Matching lines to find at most. */
  readonly maxMatches: number;
  /** Lines before and after each match. */
  readonly context: number;
  /** Output bytes left: the search may stop once its lines hold more. */
  readonly maxBytes: number;
}

interface Reply {
  readonly ms?: number;
  readonly compileError?: string;
  readonly decoded?: true;
  readonly found?: FoundLine[];
}

/** Thrown when the worker did not even decode a file in time; reported as the errno it stands for. */
class DecodeTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor() {
    super('grep could not decode a file in time');
  }
}

export class RegexWorker {
  private constructor(
    private readonly worker: Worker,
    private readonly pattern: string,
    private readonly budget: MatchBudget,
  ) {
    // Messages are queued as they come (a search answers twice in a row); a failure reaches the
    // waiting request, and one arriving after the worker was given up on is not an uncaught exception.
    worker.on('message', (reply: Reply) => this.deliver({ reply }));
    worker.on('error', (error: Error) => this.deliver({ error }));
    worker.on('exit', () => this.deliver({ error: new Error('the grep worker exited') }));
  }

  private readonly inbox: Array<{ reply?: Reply; error?: Error }> = [];
  /** Set once the worker was terminated past a deadline: the call's budget is spent. */
  private terminated = false;
  private waiting: (() => void) | undefined;

  private deliver(item: { reply?: Reply; error?: Error }): void {
    this.inbox.push(item);
    this.waiting?.();
  }

  /** The worker's next message, or its failure. */
  private async next(): Promise<Reply> {
    while (this.inbox.length === 0) {
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
      this.waiting = undefined;
    }
    const { reply, error } = this.inbox.shift() as { reply?: Reply; error?: Error };
    if (error) {
      throw error;
    }
    return reply as Reply;
  }

  /** Starts a worker for `pattern` (as the caller wrote it, for the error message). Loading re2js
   * costs the same for every pattern, so it is not charged to the budget. */
  static async start(pattern: string, budget: MatchBudget): Promise<RegexWorker> {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { re2jsPath: require.resolve('re2js'), maxLineChars: GREP_MAX_LINE_CHARS },
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
    this.worker.postMessage({ source, flags });
    return (await this.answer(this.matchingDeadline())).compileError;
  }

  /**
   * The matching lines of a file's bytes, as `request` asks. The bytes' buffer is handed over to
   * the worker (not copied), so it is unusable here afterwards.
   */
  async search(bytes: Uint8Array<ArrayBuffer>, request: SearchRequest): Promise<FoundLine[]> {
    const deadlineMs = this.matchingDeadline();
    this.worker.postMessage({ bytes: bytes.buffer, ...request }, [bytes.buffer]);
    if (!(await this.answer(DECODE_DEADLINE_MS, () => new DecodeTimeoutError())).decoded) {
      throw new Error('the grep worker answered out of turn');
    }
    return (await this.answer(deadlineMs)).found ?? [];
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  /** The budget left, as the deadline of the next match. */
  private matchingDeadline(): number {
    const deadlineMs = this.budget.remainingMs;
    if (deadlineMs <= 0 || this.terminated) {
      throw new PatternTooExpensiveError(this.pattern);
    }
    return deadlineMs;
  }

  /**
   * Waits for the worker's next message no longer than `deadlineMs`; the matching time it reports
   * is charged (so message passing between many small files costs nothing).
   * @throws PatternTooExpensiveError (or `expiredError`'s) when the deadline passes (the worker is
   * terminated mid-match), when the answer spends the budget, or when the worker runs out of heap.
   */
  private async answer(deadlineMs: number, expiredError = (): Error => new PatternTooExpensiveError(this.pattern)): Promise<Reply> {
    const answer = this.next();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), deadlineMs);
    });
    try {
      const outcome = await Promise.race([answer, expired]);
      if (outcome === 'expired') {
        this.terminated = true;
        await this.worker.terminate();
        throw expiredError();
      }
      this.budget.charge(this.pattern, outcome.ms ?? 0);
      return outcome;
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

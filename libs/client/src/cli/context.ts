import type { Readable, Writable } from 'node:stream';
import type { CodeModeClient } from '../codemode-client';
import type { SpinnerStream } from './spinner';

/** Everything a command touches outside itself, so commands run in unit tests without a process. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: SpinnerStream;
  readStdin(): Promise<string>;
  readFile(path: string): Promise<string>;
  /** Aborted on Ctrl-C: open requests are cancelled and follow loops end. */
  signal: AbortSignal;
  /** The process's own stdin and stdout, for `codemode mcp` (the MCP protocol runs over them). */
  stdio?: { stdin: Readable; stdout: Writable };
}

export interface CommandContext {
  client: CodeModeClient;
  io: CliIo;
  /** --json: raw answers, one compact JSON line each, instead of rendered text. */
  json: boolean;
}

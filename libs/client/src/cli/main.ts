#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { runCli } from './cli';
import { ExitCode } from './exit-codes';

/**
 * Process entry of the `codemode` CLI (scripts/codemode.js requires this file).
 *
 * This is the one module of the CLI that touches `process`: argv, stdio, signals and
 * `process.env`. STYLE keeps `process.env` inside libs/config, but that rule is about the
 * service's configuration; the CLI is a separate program whose environment (CODEMODE_URL,
 * CODEMODE_API_KEY) is its own, so it reads those two variables here and passes them on.
 */
export function start(): void {
  const controller = new AbortController();
  // First Ctrl-C: cancel open requests and let the command end cleanly; a second one forces it.
  process.on('SIGINT', () => {
    if (controller.signal.aborted) process.exit(ExitCode.interrupted);
    controller.abort();
  });
  const env = { CODEMODE_URL: process.env.CODEMODE_URL, CODEMODE_API_KEY: process.env.CODEMODE_API_KEY };
  runCli(process.argv.slice(2), env, {
    stdout: process.stdout,
    stderr: process.stderr,
    readStdin,
    readFile: (path) => readFile(path, 'utf8'),
    signal: controller.signal,
    stdio: { stdin: process.stdin, stdout: process.stdout },
  }).then(
    (code) => exit(code),
    (error: unknown) => {
      process.stderr.write(`codemode: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      exit(ExitCode.failed);
    },
  );
}

/** Exits once stdout has flushed, so a piped consumer gets every line even if a socket lingers. */
function exit(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

if (require.main === module) start();

import { spawn } from 'node:child_process';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { arch, hostname, platform, uptime } from 'node:os';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { NODE_COMMANDS } from '@codemode/contracts';

/** What a command answers with: a JSON value, or throws an Error whose message the cell sees. */
export type NodeHandler = (params: unknown, opts: { timeoutMs: number }) => Promise<unknown>;

/** At most this many entries per `fs.listDir`; the answer says when there were more. */
const MAX_ENTRIES = 1000;
/** Output a command keeps per stream (the newest), as the service's shell keeps it (SPEC §7). */
const MAX_OUTPUT_CHARS = 200_000;
/**
 * The node's own variables a command it runs still gets: what a shell needs to find programs and
 * its locale, nothing else. The rest (`CODEMODE_API_KEY`, `CODEMODE_URL`, any secret of the
 * node's operator) stays with the node: a command comes from an agent, which must not read the
 * key the node pairs with (SPEC §15).
 */
const KEPT_VARIABLES = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR'];

export interface NodeHandlerOptions {
  /** `fs.listDir` serves entries under this directory only. */
  root: string;
  /** `--allow`: built-ins beyond `device.status` (`fs.listDir`, `system.run`). */
  allow: readonly string[];
  /** `--command name=executable`: params as JSON on stdin, a JSON result on stdout. */
  commands: ReadonlyMap<string, string>;
}

/** The reference node's commands (SPEC §15), by name. */
export function nodeHandlers(options: NodeHandlerOptions): Map<string, NodeHandler> {
  const handlers = new Map<string, NodeHandler>();
  handlers.set(NODE_COMMANDS.status, () =>
    Promise.resolve({ hostname: hostname(), platform: platform(), arch: arch(), uptimeSeconds: Math.floor(uptime()) }),
  );
  if (options.allow.includes(NODE_COMMANDS.listDir)) handlers.set(NODE_COMMANDS.listDir, (params) => listDir(options.root, params));
  if (options.allow.includes(NODE_COMMANDS.run)) handlers.set(NODE_COMMANDS.run, (params, opts) => systemRun(options.root, params, opts));
  for (const [name, executable] of options.commands) handlers.set(name, (params, opts) => external(name, executable, params, opts));
  return handlers;
}

/** Entries of `params.path` (relative to the root, or absolute inside it); never outside the root, symlinks resolved. */
async function listDir(root: string, params: unknown): Promise<unknown> {
  const asked = typeof (params as { path?: unknown })?.path === 'string' ? (params as { path: string }).path : '.';
  const realRoot = await realpath(root);
  const target = resolve(realRoot, asked);
  let real: string;
  try {
    real = await realpath(target);
  } catch {
    throw new Error(`no such directory: ${asked}`);
  }
  if (!inside(realRoot, real)) throw new Error(`path ${asked} is outside the node's root.`);
  const names = (await readdir(real)).sort();
  const entries = [];
  for (const name of names.slice(0, MAX_ENTRIES)) {
    const stat = await lstat(resolve(real, name)).catch(() => undefined);
    const type = stat?.isDirectory() ? 'directory' : stat?.isFile() ? 'file' : stat?.isSymbolicLink() ? 'symlink' : 'other';
    entries.push({ name, type, ...(stat?.isFile() ? { size: stat.size } : {}) });
  }
  const path = relative(realRoot, real) || '.';
  return { path, entries, ...(names.length > MAX_ENTRIES ? { truncated: true, total: names.length } : {}) };
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** `system.run` (the shell tool's `host: "node"`, SPEC §7): `sh -c` under the node's own user, in the foreground. */
async function systemRun(root: string, params: unknown, opts: { timeoutMs: number }): Promise<unknown> {
  const p = (params ?? {}) as { command?: unknown; workdir?: unknown; env?: unknown };
  if (typeof p.command !== 'string' || p.command === '') throw new Error('system.run needs a command.');
  const cwd = typeof p.workdir === 'string' ? resolve(root, p.workdir) : root;
  const env = commandEnvironment(process.env, p.env);
  const started = Date.now();
  const outcome = await run('sh', ['-c', p.command], { cwd, env, timeoutMs: opts.timeoutMs });
  return { ...outcome, durationMs: Date.now() - started, cwd };
}

/** A `--command`: params as JSON on stdin, the JSON it prints is the result; a non-zero exit is an error. */
async function external(name: string, executable: string, params: unknown, opts: { timeoutMs: number }): Promise<unknown> {
  const outcome = await run(executable, [], {
    env: commandEnvironment(process.env, undefined),
    timeoutMs: opts.timeoutMs,
    stdin: JSON.stringify(params ?? {}),
  });
  if (outcome.timedOut) throw new Error(`command ${name} timed out after ${opts.timeoutMs} ms.`);
  if (outcome.exitCode !== 0)
    throw new Error(`command ${name} exited with code ${String(outcome.exitCode)}: ${outcome.stderr.slice(-2000)}`);
  try {
    return JSON.parse(outcome.stdout) as unknown;
  } catch {
    throw new Error(`command ${name} did not print JSON.`);
  }
}

interface RunOutcome {
  exitCode: number | null;
  signal?: string;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

function run(
  file: string,
  args: string[],
  opts: { cwd?: string; env: Record<string, string>; timeoutMs: number; stdin?: string },
): Promise<RunOutcome> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout = (stdout + chunk).slice(-MAX_OUTPUT_CHARS)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-MAX_OUTPUT_CHARS)));
    const timer = setTimeout(() => {
      timedOut = true;
      // The whole group: a shell's children go with it.
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, opts.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolvePromise({ exitCode, ...(signal ? { signal } : {}), timedOut, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.stdin ?? '');
  });
}

/** A command's environment: the node's `KEPT_VARIABLES`, then the call's own `env` (string values only). */
export function commandEnvironment(nodeEnv: NodeJS.ProcessEnv, callEnv: unknown): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_VARIABLES) {
    const value = nodeEnv[name];
    if (typeof value === 'string') kept[name] = value;
  }
  return { ...kept, ...stringRecord(callEnv) };
}

function stringRecord(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

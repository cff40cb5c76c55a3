import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { PtyUnavailableError, SpawnFailedError } from './errors';
import type { OutputStream } from './output-buffer';
import { childStartTime, killIfSame, signalProcessTree } from './process-tree';
import { bwrapFds, bwrapInvocation, SANDBOX_INFO_FD, type SandboxIdentity, type SandboxSetup } from './sandbox/bwrap-invocation';

/** How the spawned process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A command to run inside its own bubblewrap sandbox. */
export interface ConfinedSpawn {
  setup: SandboxSetup;
  /** The tenant's host uid/gid; null when the worker itself is unprivileged. */
  identity: SandboxIdentity | null;
  /** Host path of the session workspace (mounted at `/workspace`). */
  workspace: string;
  cpuSeconds: number;
}

export interface SpawnRequest {
  command: string;
  /** Working directory: a host path, or a path inside the sandbox when `confined` is set. */
  cwd: string;
  /** Complete environment of the child (the caller merged base env, request env, OPENCLAW_SHELL). */
  env: Record<string, string>;
  pty: boolean;
  /** Keep stdin open for `process write`; otherwise the child sees EOF at once. */
  keepStdinOpen: boolean;
  onOutput: (stream: OutputStream, text: string) => void;
  confined?: ConfinedSpawn;
}

/** One running command: its pid, its stdin, its exit, and a way to signal its whole tree. */
export interface SpawnedProcess {
  readonly pid: number;
  readonly exited: Promise<ProcessExit>;
  readonly stdinWritable: boolean;
  write(data: string | Buffer): Promise<void>;
  endStdin(): void;
  /** Signals the command's process group and every descendant's group. */
  signal(signal: NodeJS.Signals): void;
}

export interface ProcessSpawnerOptions {
  /** Shell that runs `<shell> -c <command>`. @default /bin/bash when present, else /bin/sh */
  shell?: string;
  /** util-linux `script`, used for `pty:true`. @default /usr/bin/script */
  scriptPath?: string;
  /** How long to wait for the output pipes to close after the shell exits. @default 200 */
  drainMs?: number;
}

/**
 * The one place that touches `child_process` (execa 9 is ESM-only; this repo is CommonJS).
 *
 * Every command leads its own process group (`detached: true`) so a kill or timeout reaches its
 * children too. The command runs as `<shell> -c <command>` — not a login shell: `-l` reads profile
 * files, which is slow, may print, and may reset PATH. With `pty:true` it runs under
 * `script -qefc <command> /dev/null`, which gives the child a real pseudo-terminal (`tty` prints
 * `/dev/pts/N`) without a native module; `script` runs the command with `$SHELL -c`, so SHELL is
 * set to the same shell.
 */
export class ProcessSpawner {
  readonly shell: string;
  /**
   * Node gives children socketpairs, not pipes, as stdio; bash takes a socket on stdin for an
   * sshd session and then sources ~/.bashrc. `--norc` stops that (and `--noprofile` any profile).
   */
  private readonly shellFlags: string[];
  private readonly scriptPath: string;
  private readonly drainMs: number;

  constructor(options: ProcessSpawnerOptions = {}) {
    this.shell = options.shell ?? (existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh');
    this.shellFlags = path.basename(this.shell) === 'bash' ? ['--norc', '--noprofile'] : [];
    this.scriptPath = options.scriptPath ?? '/usr/bin/script';
    this.drainMs = options.drainMs ?? 200;
  }

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    if (request.pty && !existsSync(this.scriptPath)) throw new PtyUnavailableError();
    const [file, args, env] = request.pty
      ? [this.scriptPath, ['-qefc', request.command, '/dev/null'], { TERM: 'xterm-256color', ...request.env, SHELL: this.shell }]
      : [this.shell, [...this.shellFlags, '-c', request.command], request.env];
    const child = request.confined
      ? this.spawnConfined(request.confined, [file, ...args], env, request.cwd)
      : spawn(file, args, { cwd: request.cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => reject(new SpawnFailedError(err.message)));
    });
    const spawned = new SpawnedChild(child, request, this.drainMs);
    // Nobody can signal a sandbox before it is known, so no signal ends bubblewrap alone.
    await spawned.sandboxReported;
    return spawned;
  }

  /** bubblewrap runs from `/` on the host; the command's own cwd is set inside with `--chdir`. */
  private spawnConfined(confined: ConfinedSpawn, argv: string[], env: Record<string, string>, cwd: string): ChildProcess {
    const invocation = bwrapInvocation(confined.setup, { workspace: confined.workspace, cwd, argv, env, cpuSeconds: confined.cpuSeconds });
    // bubblewrap reads its seccomp program from fd 3; the child has its own copy once spawned.
    const seccomp = invocation.seccompFile === null ? null : openSync(invocation.seccompFile, 'r');
    try {
      return spawn(invocation.file, invocation.args, {
        cwd: '/',
        env: invocation.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe', ...bwrapFds(seccomp)],
        ...(confined.identity ?? {}),
      });
    } finally {
      if (seccomp !== null) closeSync(seccomp);
    }
  }
}

/** How long a start waits for bubblewrap's report of its sandbox's pid 1 at most. */
const REPORT_WAIT_MS = 2_000;

/** A sandbox's pid 1 (bubblewrap's first process inside), as the host sees it. */
interface SandboxInit {
  pid: number;
  startTime: string;
}

class SpawnedChild implements SpawnedProcess {
  readonly pid: number;
  readonly exited: Promise<ProcessExit>;
  /** Settles once bubblewrap reported its sandbox, or gave up (at once for an unconfined command). */
  readonly sandboxReported: Promise<void>;
  private sandbox: SandboxInit | undefined;

  constructor(
    private readonly child: ChildProcess,
    request: SpawnRequest,
    drainMs: number,
  ) {
    this.pid = child.pid!;
    // A child that exits while we write must not crash the worker with EPIPE.
    child.stdin?.on('error', () => undefined);
    if (!request.keepStdinOpen) child.stdin?.end();
    const info = request.confined ? (child.stdio[SANDBOX_INFO_FD] as Readable) : null;
    const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.sandboxReported = info
      ? sandboxReport(info, this.pid, exit, drainMs).then((init) => void (this.sandbox = init))
      : Promise.resolve();
    // bubblewrap's --die-with-parent, made certain: its pid 1 asks the kernel for it only once
    // the sandbox is set up, so a bubblewrap ended before that would leave the sandbox running.
    if (info) void exit.then(() => this.sandboxReported).then(() => this.endSandbox(info));
    const closed = [this.pipe('stdout', request), this.pipe('stderr', request)];
    this.exited = new Promise<ProcessExit>((resolve) => {
      child.once('exit', (code, signal) => {
        // Output written just before exit may still be in the pipes; a grandchild left running in
        // the background may hold them open forever, so the wait for them is bounded.
        const drained = Promise.all(closed);
        const timer = setTimeout(() => this.detachPipes(), drainMs);
        void drained.then(() => {
          clearTimeout(timer);
          child.stdin?.destroy();
          resolve({ code, signal });
        });
      });
    });
  }

  get stdinWritable(): boolean {
    const stdin = this.child.stdin;
    return !!stdin && !stdin.destroyed && stdin.writable && !stdin.writableEnded;
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.child.stdin!.write(data, (err) => (err ? reject(err) : resolve()));
    });
  }

  endStdin(): void {
    this.child.stdin?.end();
  }

  signal(signal: NodeJS.Signals): void {
    signalProcessTree(this.pid, signal);
  }

  private pipe(stream: OutputStream, request: SpawnRequest): Promise<void> {
    const source = this.child[stream]!;
    const decoder = new StringDecoder('utf8');
    source.on('data', (chunk: Buffer) => request.onOutput(stream, decoder.write(chunk)));
    return new Promise((resolve) => {
      source.once('close', () => {
        request.onOutput(stream, decoder.end());
        resolve();
      });
    });
  }

  private detachPipes(): void {
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }

  private endSandbox(info: Readable): void {
    if (this.sandbox) killIfSame(this.sandbox.pid, this.sandbox.startTime);
    info.destroy();
  }
}

/**
 * The sandbox's pid 1 from bubblewrap's `--info-fd` report (`"child-pid": <pid>,`), taken only
 * while it is still bubblewrap's child (a pid read after it ended could name another process).
 * Undefined when the report never comes: bubblewrap closed the pipe, exited `drainMs` ago, or
 * said nothing for `REPORT_WAIT_MS`.
 */
function sandboxReport(info: Readable, bwrapPid: number, exit: Promise<void>, drainMs: number): Promise<SandboxInit | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const reported = /"child-pid":\s*(\d+)[,\s}]/.exec(text);
      if (!reported) return;
      // The rest of the report is drained, not read: bubblewrap must not block on a full pipe.
      info.off('data', onData);
      info.resume();
      const pid = Number(reported[1]);
      const startTime = childStartTime(pid, bwrapPid);
      resolve(startTime === undefined ? undefined : { pid, startTime });
    };
    info.on('data', onData);
    info.once('close', () => resolve(undefined));
    info.once('error', () => resolve(undefined));
    void exit.then(() => setTimeout(() => resolve(undefined), drainMs));
    // bubblewrap reports within milliseconds of its start; one stopped from outside must not hold the call.
    setTimeout(() => resolve(undefined), REPORT_WAIT_MS).unref();
  });
}

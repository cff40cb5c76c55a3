import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root, from the sources (test/utils) or from the build (dist/test/utils). */
const ROOT = [join(__dirname, '..', '..'), join(__dirname, '..', '..', '..')].find((dir) => existsSync(join(dir, 'package.json')))!;
const ENTRIES = { api: 'dist/apps/api/src/main.js', worker: 'dist/apps/worker/src/main.js' } as const;
const LOG_TAIL_CHARS = 64 * 1024;

/** One built app (api or worker) running as a real child process. */
export class AppProcess {
  private output = '';
  private readonly exited: Promise<number | null>;

  private constructor(
    readonly role: keyof typeof ENTRIES,
    readonly child: ChildProcess,
  ) {
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString()).slice(-LOG_TAIL_CHARS);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  /** `nodeArgs`: flags for node itself, before the entry (those NODE_OPTIONS refuses, e.g. `--cpu-prof`). */
  static spawn(role: keyof typeof ENTRIES, env: Record<string, string>, nodeArgs: readonly string[] = []): AppProcess {
    const child = spawn(process.execPath, [...nodeArgs, join(ROOT, ENTRIES[role])], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new AppProcess(role, child);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  logs(): string {
    return this.output;
  }

  /** SIGSTOP: the process stays alive but runs nothing (a stalled worker), until `resume`. */
  pause(): void {
    if (this.alive) this.child.kill('SIGSTOP');
  }

  /** SIGCONT after `pause`. */
  resume(): void {
    if (this.alive) this.child.kill('SIGCONT');
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 10_000): Promise<number | null> {
    if (!this.alive) return this.child.exitCode;
    this.resume();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  async kill(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  waitForExit(): Promise<number | null> {
    return this.exited;
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

/**
 * A private `redis-server` for chaos tests: its own free port and its own temp dir, with
 * `appendonly yes` so what it acknowledged survives a restart. Never the shared Redis on 6379.
 * `stop()` is a clean SIGTERM shutdown (Redis flushes the AOF), `kill()` is SIGKILL;
 * `restart()` starts it again on the same port and dir; `cleanup()` stops it and removes the dir.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), mkdtempSync(join(tmpdir(), 'chaos-redis-')));
    try {
      await redis.launch();
    } catch (error) {
      await redis.cleanup();
      throw error;
    }
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Answers once PING gets PONG (not LOADING) or throws after `timeoutMs`. */
  async waitReady(timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (!this.running) throw new Error(`redis-server on ${this.port} exited:\n${this.logs()}`);
      if ((await ping(this.port)) === '+PONG') return;
      await sleep(25);
    }
    throw new Error(`redis-server on ${this.port} did not answer PING within ${timeoutMs} ms:\n${this.logs()}`);
  }

  /** SIGSTOP: Redis keeps its connections but answers nothing (a stalled primary), until `resume`. */
  pause(): void {
    if (this.child && this.running) this.child.kill('SIGSTOP');
  }

  /** SIGCONT after `pause`: Redis runs what it received meanwhile. */
  resume(): void {
    if (this.child && this.running) this.child.kill('SIGCONT');
  }

  /** Clean shutdown (SIGTERM: Redis writes out its AOF), SIGKILL after `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Abrupt death (SIGKILL). Writes Redis already answered are in the AOF file (page cache). */
  async kill(): Promise<void> {
    if (!this.child || !this.running) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Stops it (unless already stopped), waits `downMs`, starts it again on the same port and dir. */
  async restart(downMs = 0): Promise<void> {
    await this.stop();
    if (downMs > 0) await sleep(downMs);
    await this.launch();
  }

  /** Starts it again after a `stop()`/`kill()` on the same port and dir. */
  async launch(): Promise<void> {
    if (this.running) throw new Error('redis-server is already running');
    // A port just released can still be held for a moment; redis-server sets SO_REUSEADDR, so a
    // retry is only needed when someone else grabbed the port in between (then we fail clearly).
    for (let attempt = 0; ; attempt += 1) {
      this.spawnServer();
      try {
        await this.waitReady();
        return;
      } catch (error) {
        if (attempt >= 3) throw error;
        await this.kill();
        await sleep(200);
      }
    }
  }

  logs(): string {
    try {
      return readFileSync(join(this.dir, 'redis.log'), 'utf8').slice(-8192);
    } catch {
      return '(no redis.log)';
    }
  }

  async cleanup(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private spawnServer(): void {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
      '--daemonize',
      'no',
      '--logfile',
      'redis.log',
      '--protected-mode',
      'yes',
    ];
    const child = spawn('redis-server', args, { cwd: this.dir, stdio: 'ignore' });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.on('exit', () => resolve());
      child.on('error', () => resolve());
    });
  }
}

/** The first line of the answer to an inline PING, or '' when nothing answered. */
function ping(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (value: string): void => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(1000, () => done(''));
    socket.on('error', () => done(''));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      const end = answer.indexOf('\r\n');
      if (end !== -1) done(answer.slice(0, end));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

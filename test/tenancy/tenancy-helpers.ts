import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { AppProcess } from '../utils/app-process';
import { freePort } from '../utils/free-port';
import { redisEnv, TestStack } from '../utils/test-stack';

/**
 * Helpers of the adversarial two-tenant suite: canary secrets, leak detection over answers, raw
 * HTTP that keeps `..` in the path, host-side process checks, and a stack whose worker is started
 * without `CODEMODE_API_KEYS` (as SPEC §10 "Deployment" requires of real deployments).
 */

/** Secrets planted in every process's environment (and the API keys themselves). */
export interface Canaries {
  readonly keyAlpha: string;
  readonly keyBeta: string;
  readonly webhookSecret: string;
  readonly envToken: string;
  /** Content of beta's `secret.txt`, written by beta; alpha must never see it. */
  readonly betaFile: string;
}

export function makeCanaries(): Canaries {
  const run = randomBytes(6).toString('hex');
  return {
    keyAlpha: `ka-${run}-alpha`,
    keyBeta: `kb-${run}-beta`,
    webhookSecret: `canary-whsec-${run}`,
    envToken: `canary-env-${run}`,
    betaFile: `canary-betafile-${run}`,
  };
}

export const apiKeysOf = (c: Canaries): string => `${c.keyAlpha}:alpha,${c.keyBeta}:beta`;

/**
 * Environment of every process of the suite: the canaries and small caps so limits are quick to
 * hit (SPEC §10 "Shell confinement").
 */
export function tenancyEnv(c: Canaries): Record<string, string> {
  return {
    CODEMODE_WEBHOOK_SECRETS: `alpha:${c.webhookSecret}`,
    CANARY_SECRET_TOKEN: c.envToken,
    CODEMODE_SHELL_SANDBOX: 'bwrap',
    CODEMODE_SHELL_MAX_TIMEOUT_SECONDS: '3',
    CODEMODE_SHELL_MAX_PROCESSES: '64',
    CODEMODE_SHELL_MAX_FILE_BYTES: '1048576',
    CODEMODE_SHELL_MEMORY_BYTES: '268435456',
    CODEMODE_WORKSPACE_MAX_BYTES: '8388608',
  };
}

/**
 * Labels of the secrets found in any of `answers` (serialized as JSON): the canaries, the host
 * workspace root and the Redis key prefix (which names the host folder too). Labels, not values,
 * so a failure message never prints a secret.
 */
export function leaksIn(answers: readonly unknown[], c: Canaries, stack: TestStack): string[] {
  const text = answers.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join('\n');
  const secrets: Record<string, string> = {
    'alpha API key': c.keyAlpha,
    'beta API key': c.keyBeta,
    'webhook secret': c.webhookSecret,
    'CANARY_SECRET_TOKEN value': c.envToken,
    "beta's secret file": c.betaFile,
    'host workspace root': stack.workspaceRoot,
    'Redis key prefix': stack.prefix,
  };
  return Object.entries(secrets)
    .filter(([, value]) => text.includes(value))
    .map(([label]) => label);
}

/** Names of the service's own variables (and the planted one) that appear in an env dump. */
export function serviceVariablesIn(dump: string): string[] {
  const names = dump.match(/(CODEMODE_|REDIS_|WORKER_METRICS_)[A-Z0-9_]*(?==)|CANARY_SECRET_TOKEN/g) ?? [];
  // SPEC §16 gives a command run from a cell its own call's key: the caller's data, not the service's.
  return [...new Set(names)].filter((name) => name !== COMMAND_CALL_KEY).sort();
}

const COMMAND_CALL_KEY = 'CODEMODE_CALL_KEY';

export interface RawAnswer {
  status: number;
  body: unknown;
}

/**
 * One HTTP request with `path` sent byte for byte: `fetch` (WHATWG URL) would resolve `..`, `.`
 * and `%2e%2e` segments before sending, which is exactly what these tests must not do.
 */
export function rawRequest(baseUrl: string, method: string, path: string, apiKey: string, body?: unknown): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
        timeout: 20_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Host pids whose command line contains `marker` (or, with `exact`, is exactly `marker`), read from
 * the host's /proc; zombies (empty command lines) excluded.
 */
export function hostPidsWith(marker: string, opts: { exact?: boolean } = {}): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      continue;
    }
    if (opts.exact ? cmdline === marker : cmdline.includes(marker)) pids.push(Number(name));
  }
  return pids;
}

/** Each pid's state, parent and command line, read from /proc (for a failure's message). */
export function describePids(pids: readonly number[]): string {
  return pids
    .map((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
        return `${pid} state ${state} ppid ${ppid}: ${cmdline}`;
      } catch {
        return `${pid} gone`;
      }
    })
    .join('; ');
}

/** Kills, by pid, the processes this suite started that carry `marker` (cleanup after a failure). */
export function killHostPids(marker: string): void {
  for (const pid of hostPidsWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 50 ms for up to `ms`; true as soon as it holds. */
export async function eventually(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await sleep(50);
  }
  return check();
}

/** Deletes, on the host, every file under `root` whose name starts with `namePrefix`; returns how many. */
export function removeHostFiles(root: string, namePrefix: string): number {
  let removed = 0;
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.startsWith(namePrefix)) {
        rmSync(full, { force: true });
        removed += 1;
      }
    }
  };
  walk(root);
  return removed;
}

/**
 * A keyed deployment whose API has `CODEMODE_API_KEYS` and whose workers do not: a worker must
 * learn the mode from the API's record in Redis (SPEC §10 "Mode").
 */
export class KeylessWorkerStack {
  readonly workers: AppProcess[] = [];

  private constructor(
    readonly stack: TestStack,
    private readonly env: Record<string, string>,
  ) {}

  /** The first worker, started with the deployment and awaited until ready. */
  get worker(): AppProcess {
    return this.workers[0];
  }

  static async start(apiKeys: string, env: Record<string, string>): Promise<KeylessWorkerStack> {
    const stack = await TestStack.start({ apiKeys, env, workers: 0 });
    const started = new KeylessWorkerStack(stack, env);
    try {
      const { worker, url } = await started.addWorker();
      await waitHealth(worker, `${url}/health/ready`);
    } catch (error) {
      await started.stop();
      throw error;
    }
    return started;
  }

  /** Starts one more worker without the keys (extra env on top) and waits until it is live. */
  async addWorker(extraEnv: Record<string, string> = {}): Promise<{ worker: AppProcess; url: string }> {
    const port = String(await freePort());
    const worker = AppProcess.spawn('worker', {
      ...redisEnv(),
      CODEMODE_KEY_PREFIX: this.stack.prefix,
      CODEMODE_WORKSPACE_ROOT: this.stack.workspaceRoot,
      CODEMODE_SANDBOX_THREADS: '2',
      ...this.env,
      ...extraEnv,
      WORKER_METRICS_PORT: port,
    });
    this.workers.push(worker);
    const url = `http://127.0.0.1:${port}`;
    await waitHealth(worker, `${url}/health/live`);
    return { worker, url };
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop()));
    await this.stack.stop();
  }
}

async function waitHealth(worker: AppProcess, url: string): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if (!worker.alive) throw new Error(`keyless worker exited during start-up:\n${worker.logs()}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`keyless worker did not answer 200 at ${url}:\n${worker.logs()}`);
}

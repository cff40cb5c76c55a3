import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { CodeModeClient } from '@codemode/client';
import { waitUntilReady } from '@codemode/events';
import { AppProcess } from './app-process';
import { freePort } from './free-port';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * Seeds of the Redis Cluster the stacks run on instead, when set (SPEC §13: one of `.ci/run`'s
 * passes sets it, so the e2e suites run against a cluster as well as one Redis).
 */
export const REDIS_CLUSTER_NODES = process.env.REDIS_CLUSTER_NODES?.trim() || undefined;

/** The environment that points an app at the tests' Redis (the cluster when there is one). */
export function redisEnv(): Record<string, string> {
  return REDIS_CLUSTER_NODES ? { REDIS_URL, REDIS_CLUSTER_NODES } : { REDIS_URL };
}

/**
 * How the stacks dispatch new cells: the test process's `CODEMODE_CELL_DISPATCH` when set (so the
 * e2e suites can run with new cells as BullMQ jobs), else the apps' default (the shard streams).
 */
function cellDispatchEnv(): Record<string, string> {
  const mode = process.env.CODEMODE_CELL_DISPATCH?.trim();
  return mode ? { CODEMODE_CELL_DISPATCH: mode } : {};
}

/** The stack's Redis: a private one when the options name it, else the shared one. */
function privateRedisEnv(options: StackOptions): Record<string, string> {
  if (options.redisClusterNodes) return { REDIS_CLUSTER_NODES: options.redisClusterNodes };
  if (options.redisUrl) return { REDIS_URL: options.redisUrl };
  return redisEnv();
}

/** A client of the stacks' Redis (the cluster when there is one), for tests that look at keys. */
export function stackRedis(options: { maxRetriesPerRequest?: number | null } = {}): Redis | Cluster {
  if (!REDIS_CLUSTER_NODES) return new Redis(REDIS_URL, options);
  const seeds = REDIS_CLUSTER_NODES.split(',').map((seed) => {
    const [host, port] = seed.replace(/^redis:\/\//, '').split(':');
    return { host, port: Number(port) };
  });
  return new Cluster(seeds, { redisOptions: options });
}

/** Every key matching `pattern`, over every primary of a cluster. */
export async function scanKeys(redis: Redis | Cluster, pattern: string): Promise<string[]> {
  // A cluster client knows no node before it is ready: scanned then, the cluster looked empty.
  if (redis instanceof Cluster) await waitUntilReady(redis, 10_000);
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const found: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

export interface StackOptions {
  /** Number of workers to start (default 1). */
  workers?: number;
  /** Extra environment for every process. */
  env?: Record<string, string>;
  apiKeys?: string;
  /** A private Redis instead of the shared one (its keys are not cleaned up). */
  redisUrl?: string;
  /** A private Redis Cluster's seeds instead of the shared Redis (its keys are not cleaned up). */
  redisClusterNodes?: string;
  /** Flags for node itself in every process (AppProcess.spawn). */
  nodeArgs?: string[];
}

/**
 * A real api and real workers on a private key prefix of the shared local Redis. Each test file
 * starts its own stack and stops it in afterAll, which also deletes the prefix's keys.
 */
export class TestStack {
  readonly workers: AppProcess[] = [];
  /** API processes replaced by `restartApi()`, oldest first (kept for their logs). */
  readonly previousApis: AppProcess[] = [];
  /** APIs started by `addApi()`. */
  readonly extraApis: AppProcess[] = [];
  private readonly metricsPorts = new Map<AppProcess, string>();
  private constructor(
    readonly prefix: string,
    readonly baseUrl: string,
    private currentApi: AppProcess,
    private readonly env: Record<string, string>,
    private readonly nodeArgs: readonly string[] = [],
  ) {}

  /** The API process serving `baseUrl` (the newest one after `restartApi()`). */
  get api(): AppProcess {
    return this.currentApi;
  }

  static async start(options: StackOptions = {}): Promise<TestStack> {
    const prefix = `t${randomBytes(5).toString('hex')}`;
    const port = await freePort();
    const env: Record<string, string> = {
      ...privateRedisEnv(options),
      ...cellDispatchEnv(),
      // A multi-tenant API serves /metrics here (SPEC §10); each stack gets its own.
      API_METRICS_PORT: String(await freePort()),
      CODEMODE_KEY_PREFIX: prefix,
      CODEMODE_WORKSPACE_ROOT: mkdtempSync(join(tmpdir(), `${prefix}-ws-`)),
      CODEMODE_SANDBOX_THREADS: '2',
      ...(options.apiKeys ? { CODEMODE_API_KEYS: options.apiKeys } : {}),
      ...options.env,
    };
    const api = AppProcess.spawn('api', { ...env, PORT: String(port) }, options.nodeArgs);
    const stack = new TestStack(prefix, `http://127.0.0.1:${port}`, api, env, options.nodeArgs);
    try {
      await stack.waitReady(stack.baseUrl, api, options.redisUrl === undefined);
      for (let i = 0; i < (options.workers ?? 1); i += 1) await stack.addWorker();
    } catch (error) {
      await stack.stop();
      throw error;
    }
    return stack;
  }

  /** Where the API serves `/metrics`: its own port in multi-tenant mode, else the public one (SPEC §10). */
  get apiMetricsUrl(): string {
    const multi =
      this.env.CODEMODE_TENANCY === 'multi' || (this.env.CODEMODE_TENANCY !== 'single' && this.env.CODEMODE_API_KEYS !== undefined);
    return multi ? `http://127.0.0.1:${this.env.API_METRICS_PORT}` : this.baseUrl;
  }

  /** Root of this stack's per-session workspaces (`<root>/<tenant>/<sid>`). */
  get workspaceRoot(): string {
    return this.env.CODEMODE_WORKSPACE_ROOT;
  }

  client(apiKey?: string): CodeModeClient {
    return new CodeModeClient({ baseUrl: this.baseUrl, apiKey });
  }

  /**
   * Replaces the API with a new process on the same port and env: the current one is killed
   * (`SIGKILL`, the default) or stopped (`SIGTERM`) unless it is already dead. Resolves once the
   * new API answers `/health/ready` (or `/health/live` with `needReady: false`).
   */
  async restartApi(opts: { signal?: 'SIGKILL' | 'SIGTERM'; needReady?: boolean } = {}): Promise<AppProcess> {
    const old = this.currentApi;
    if (old.alive) await (opts.signal === 'SIGTERM' ? old.stop() : old.kill());
    const api = AppProcess.spawn('api', { ...this.env, PORT: new URL(this.baseUrl).port }, this.nodeArgs);
    this.previousApis.push(old);
    this.currentApi = api;
    await this.waitReady(this.baseUrl, api, opts.needReady ?? true);
    return api;
  }

  /**
   * Starts one more API process (same env, plus `env`) on its own port, or on the port of `baseUrl`
   * (standing in for one that died); stopped with the stack.
   */
  async addApi(baseUrl?: string, env: Record<string, string> = {}): Promise<{ api: AppProcess; baseUrl: string }> {
    const port = baseUrl === undefined ? await freePort() : Number(new URL(baseUrl).port);
    const api = AppProcess.spawn(
      'api',
      { ...this.env, PORT: String(port), API_METRICS_PORT: String(await freePort()), ...env },
      this.nodeArgs,
    );
    this.extraApis.push(api);
    const url = `http://127.0.0.1:${port}`;
    await this.waitReady(url, api, true);
    return { api, baseUrl: url };
  }

  /** Starts one more worker and waits until it consumes cells. */
  async addWorker(env: Record<string, string> = {}): Promise<AppProcess> {
    const metricsPort = String(await freePort());
    const worker = this.spawnWorker({ WORKER_METRICS_PORT: metricsPort, ...env });
    await this.waitReady(`http://127.0.0.1:${metricsPort}`, worker, true);
    return worker;
  }

  /** Starts a worker without waiting for it (e.g. one whose health port is taken). */
  spawnWorker(env: Record<string, string> = {}): AppProcess {
    const worker = AppProcess.spawn('worker', { ...this.env, ...env }, this.nodeArgs);
    this.workers.push(worker);
    if (env.WORKER_METRICS_PORT) this.metricsPorts.set(worker, env.WORKER_METRICS_PORT);
    return worker;
  }

  /** Base URL of a worker's health and metrics port. */
  workerUrl(worker: AppProcess): string {
    const port = this.metricsPorts.get(worker);
    if (port === undefined) throw new Error('this worker was started without WORKER_METRICS_PORT');
    return `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    await Promise.all([this.api.stop(), ...this.extraApis.map((a) => a.stop()), ...this.workers.map((w) => w.stop())]);
    await deleteKeys(this.env.REDIS_URL === REDIS_URL && this.env.REDIS_CLUSTER_NODES === REDIS_CLUSTER_NODES ? this.prefix : null);
    rmSync(this.env.CODEMODE_WORKSPACE_ROOT, { recursive: true, force: true });
  }

  logs(): string {
    return [...this.previousApis, this.api, ...this.extraApis, ...this.workers]
      .map((p) => `--- ${p.role} ${p.pid}\n${p.logs()}`)
      .join('\n');
  }

  private async waitReady(baseUrl: string, app: AppProcess, needReady: boolean): Promise<void> {
    const path = needReady ? '/health/ready' : '/health/live';
    const until = Date.now() + 30_000;
    while (Date.now() < until) {
      if (!app.alive) throw new Error(`${app.role} exited during start-up:\n${app.logs()}`);
      const ok = await fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${app.role} did not become ready at ${baseUrl}:\n${app.logs()}`);
  }
}

/** Deletes every key of a test prefix (event keys and BullMQ's `{prefix:…}` keys); never flushes. */
export async function deleteKeys(prefix: string | null): Promise<void> {
  if (prefix === null) return;
  const redis = stackRedis({ maxRetriesPerRequest: 1 });
  try {
    for (const pattern of [`${prefix}:*`, `{${prefix}:*`]) {
      // One UNLINK per key: on a cluster the keys are in many slots.
      for (const key of await scanKeys(redis, pattern)) await redis.unlink(key);
    }
  } finally {
    redis.disconnect();
  }
}

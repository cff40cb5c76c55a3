import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PRIMARIES = 3;
/** Redis Cluster's bus port is the client port + 10000 (both must be free). */
const BUS_OFFSET = 10_000;

/**
 * A private Redis Cluster for chaos tests (SPEC §13): 3 primaries with one replica each (or none), on free
 * loopback ports, redis-server's own cluster mode, formed by `redis-cli --cluster create`. A short
 * node timeout makes a killed primary fail over in a few seconds. Never the shared Redis.
 */
export class PrivateRedisCluster {
  private readonly children = new Map<number, ChildProcess>();

  private constructor(
    readonly ports: readonly number[],
    private readonly dir: string,
    private readonly replicas: 0 | 1,
  ) {}

  static async start(options: { replicas?: 0 | 1 } = {}): Promise<PrivateRedisCluster> {
    const replicas = options.replicas ?? 1;
    const cluster = new PrivateRedisCluster(
      await freeBase(PRIMARIES * (1 + replicas)),
      mkdtempSync(join(tmpdir(), 'chaos-cluster-')),
      replicas,
    );
    try {
      await cluster.form();
    } catch (error) {
      await cluster.cleanup();
      throw error;
    }
    return cluster;
  }

  /** `REDIS_CLUSTER_NODES` for the apps. */
  get seeds(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  /** Ports of the nodes that are primaries now. */
  async primaries(): Promise<number[]> {
    const out: number[] = [];
    for (const port of this.ports) {
      if (!this.children.has(port)) continue;
      if ((await cli(port, 'role').catch(() => '')).startsWith('master')) out.push(port);
    }
    return out;
  }

  /** The hash slots the primary on `port` serves, as its peers see them. */
  async slotsOf(port: number): Promise<(slot: number) => boolean> {
    const peer = this.ports.find((p) => p !== port && this.children.has(p))!;
    const line = (await cli(peer, 'cluster', 'nodes')).split('\n').find((l) => l.split(' ')[1]?.startsWith(`127.0.0.1:${port}@`)) ?? '';
    const ranges = line
      .split(' ')
      .slice(8)
      .map((range) => range.split('-').map(Number))
      .map(([from, to]) => [from, to ?? from]);
    return (slot) => ranges.some(([from, to]) => slot >= from && slot <= to);
  }

  /** Abrupt death of one node (SIGKILL). */
  async kill(port: number): Promise<void> {
    const child = this.children.get(port);
    if (!child) return;
    this.children.delete(port);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  async cleanup(): Promise<void> {
    for (const port of [...this.children.keys()]) await this.kill(port);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async form(): Promise<void> {
    for (const port of this.ports) {
      const dir = join(this.dir, String(port));
      mkdirSync(dir);
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'];
      args.push('--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '1500');
      this.children.set(port, spawn('redis-server', [...args, '--logfile', 'redis.log'], { cwd: dir, stdio: 'ignore' }));
    }
    for (const port of this.ports) await until(async () => (await cli(port, 'ping').catch(() => '')) === 'PONG', `node ${port} answers`);
    await run('redis-cli', [
      '--cluster',
      'create',
      ...this.ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      String(this.replicas),
      '--cluster-yes',
    ]);
    // Ready (to fail over): the cluster is ok on every node and every primary has its replica in sync.
    await until(async () => {
      for (const port of this.ports) if (!(await cli(port, 'cluster', 'info')).includes('cluster_state:ok')) return false;
      const primaries = await this.primaries();
      if (primaries.length !== PRIMARIES) return false;
      for (const port of primaries)
        if (!new RegExp(`connected_slaves:${this.replicas}`).test(await cli(port, 'info', 'replication'))) return false;
      // A replica counts as connected while its first sync runs; it can take over only once in sync.
      for (const port of this.ports.filter((p) => !primaries.includes(p)))
        if (!(await cli(port, 'info', 'replication')).includes('master_link_status:up')) return false;
      return true;
    }, 'the cluster is ok with a replica per primary');
  }
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args], { timeout: 2000 });
  return stdout.trim();
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`private Redis Cluster: not so within ${timeoutMs} ms: ${what}`);
}

/** `nodes` consecutive ports that are free on loopback, with their bus ports. */
async function freeBase(nodes: number): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    // Below Linux's ephemeral range (32768+), bus ports included: a port the kernel hands to an
    // outgoing connection between this check and redis-server's bind would fail the start.
    const base = 20_000 + Math.floor(Math.random() * 2_700);
    const ports = Array.from({ length: nodes }, (_, i) => base + i);
    const free = await Promise.all([...ports, ...ports.map((p) => p + BUS_OFFSET)].map(portFree));
    if (free.every(Boolean)) return ports;
  }
  throw new Error('private Redis Cluster: found no free ports');
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

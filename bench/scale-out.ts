import { Cluster, Redis } from 'ioredis';
import { CodeModeClient } from '@codemode/client';
import { PrivateRedis } from '../test/utils/private-redis';
import { PrivateRedisCluster } from '../test/utils/private-redis-cluster';
import { TestStack } from '../test/utils/test-stack';
import { measureRedisCost, redisCostTable, type RedisCostReport } from './redis-cost';
import { allKeysBytes, retainedByKind } from './retained-bytes';
import { fmt, measureThroughput } from './stats';

/** SPEC §13 "Spread": 96 sessions of trivial execs at 32 in flight. */
const SESSIONS = 96;
const IN_FLIGHT = 32;
export const TENANTS = ['alpha', 'beta', 'gamma', 'delta'];
const TOOL_CALLS = 20;
const PROFILE_EXECS = 200;
/** How long the idle CPU of the primaries is read for, before each load. */
const IDLE_MS = 5_000;

/** Redis-side cost of one kind of call, from INFO deltas of every primary. */
export interface RedisLoad {
  /**
   * Redis CPU (user + sys) per call, ms, summed over the primaries, less what the same primaries
   * spend idle over as long (cron, cluster bus and replication pings, the fleet's lease renewals
   * and sweeps): the part the calls cost.
   */
  cpuMs: number;
  /** The same without taking the idle CPU off. */
  rawCpuMs: number;
  /** Commands Redis ran per call (INFO commandstats, script-inner commands included). */
  commands: number;
  /**
   * Socket reads the primaries served per call (INFO `total_reads_processed`), less the idle rate
   * and the bench's own INFO reads: a pipelined batch read at once is one, however many commands.
   */
  socketReads: number;
  /** `used_memory` growth per call, bytes, summed over the primaries (what a finished run keeps). */
  memoryBytes: number;
  /** Each primary's share of the Redis CPU, highest first. */
  shares: number[];
  throughput: number;
}

export interface ScaleOutReport {
  calls: number;
  /** What the single Redis holds after the exec load, by kind of key, bytes per exec (MEMORY USAGE). */
  retained: { kind: string; bytes: number }[];
  /** Where one Redis's time goes per exec in this mode (slow log, sequential execs). */
  profile: RedisCostReport;
  single: { exec: RedisLoad; toolCall: RedisLoad };
  cluster: { exec: RedisLoad; withoutReplicas: RedisLoad };
}

/**
 * SPEC §13 "Measure scale-out": the same multi-tenant load (quotas on, limits high enough that
 * none refuses) against a private Redis and a private 3-primary Redis Cluster, each used by this
 * run only, so INFO's CPU and memory counters are the service's own.
 */
export async function measureScaleOut(calls: number): Promise<ScaleOutReport> {
  const single = await PrivateRedis.start();
  try {
    const stack = await startMultiTenantStack({ redisUrl: single.url });
    try {
      const nodes = [new Redis(single.url)];
      const exec = await loadOf(nodes, calls, stack, 'return 1+1');
      const retained = await retainedByKind(nodes[0], stack.prefix, calls + SESSIONS * 2);
      const tools = await loadOf(nodes, Math.ceil(calls / 10), stack, `for (let i = 0; i < ${TOOL_CALLS}; i++) await ls({}); return 2;`);
      const toolCall: RedisLoad = {
        cpuMs: (tools.cpuMs - exec.cpuMs) / TOOL_CALLS,
        rawCpuMs: (tools.rawCpuMs - exec.rawCpuMs) / TOOL_CALLS,
        commands: (tools.commands - exec.commands) / TOOL_CALLS,
        socketReads: (tools.socketReads - exec.socketReads) / TOOL_CALLS,
        memoryBytes: (tools.memoryBytes - exec.memoryBytes) / TOOL_CALLS,
        shares: tools.shares,
        throughput: tools.throughput * TOOL_CALLS,
      };
      for (const node of nodes) node.disconnect();
      const client = new CodeModeClient({ baseUrl: stack.baseUrl, apiKey: `key-${TENANTS[0]}` });
      const profile = await measureRedisCost(
        PROFILE_EXECS,
        async () => {
          const result = await client.exec('scale-profile', { title: 'add', code: 'return 1+1' });
          if (result.status !== 'completed') throw new Error(`scale-out exec failed: ${JSON.stringify(result)}`);
        },
        single.url,
      );
      return {
        calls,
        retained,
        profile,
        single: { exec, toolCall },
        cluster: { exec: await clusterLoad(calls, 1), withoutReplicas: await clusterLoad(calls, 0) },
      };
    } finally {
      await stack.stop();
    }
  } finally {
    await single.cleanup();
  }
}

async function clusterLoad(calls: number, replicas: 0 | 1): Promise<RedisLoad> {
  const cluster = await PrivateRedisCluster.start({ replicas });
  try {
    const stack = await startMultiTenantStack({ redisClusterNodes: cluster.seeds });
    try {
      const client = new Cluster(cluster.seeds.split(',').map((seed) => ({ host: '127.0.0.1', port: Number(seed.split(':')[1]) })));
      await new Promise<void>((resolve) => client.once('ready', () => resolve()));
      const primaries = client.nodes('master');
      try {
        return await loadOf(primaries, calls, stack, 'return 1+1');
      } finally {
        client.disconnect();
      }
    } finally {
      await stack.stop();
    }
  } finally {
    await cluster.cleanup();
  }
}

/**
 * One api and one worker, multi-tenant (TENANTS, key `key-<tenant>`), quotas on and high enough
 * that none refuses; `env` is added to both processes' environment.
 */
export function startMultiTenantStack(
  redis: { redisUrl?: string; redisClusterNodes?: string },
  env: Record<string, string> = {},
): Promise<TestStack> {
  return TestStack.start({
    workers: 1,
    ...redis,
    apiKeys: TENANTS.map((tenant) => `key-${tenant}:${tenant}`).join(','),
    env: {
      CODEMODE_TENANCY: 'multi',
      // Quotas on, as high as the load needs: each is checked on every call, none refuses.
      CODEMODE_TENANT_RATE: '1000000',
      CODEMODE_TENANT_BURST: '1000000',
      CODEMODE_TENANT_MAX_INFLIGHT: String(IN_FLIGHT * 2),
      ...env,
    },
  });
}

/** Runs `calls` execs of `code` over SESSIONS sessions at IN_FLIGHT, and reads what Redis spent. */
async function loadOf(nodes: Redis[], calls: number, stack: TestStack, code: string): Promise<RedisLoad> {
  const clients = TENANTS.map((tenant) => new CodeModeClient({ baseUrl: stack.baseUrl, apiKey: `key-${tenant}` }));
  let n = 0;
  const exec = async (): Promise<void> => {
    const i = n++;
    const result = await clients[i % TENANTS.length].exec(`scale-${i % SESSIONS}`, { title: 'scale', code });
    if (result.status !== 'completed') throw new Error(`scale-out exec failed: ${JSON.stringify(result)}`);
  };
  await measureThroughput(SESSIONS * 2, IN_FLIGHT, exec); // every session exists, every path is warm
  const idleFrom = await Promise.all(nodes.map(readInfo));
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const before = await Promise.all(nodes.map(readInfo));
  const idlePerMs = before.map((b, i) => (b.cpuMs - idleFrom[i].cpuMs) / IDLE_MS);
  const started = performance.now();
  const throughput = await measureThroughput(calls, IN_FLIGHT, exec);
  const tookMs = performance.now() - started;
  const after = await Promise.all(nodes.map(readInfo));
  const raw = after.map((a, i) => a.cpuMs - before[i].cpuMs);
  const cpu = raw.map((ms, i) => Math.max(0, ms - idlePerMs[i] * tookMs));
  const total = cpu.reduce((sum, ms) => sum + ms, 0);
  const sum = (pick: (info: NodeInfo) => number) => after.reduce((s, a, i) => s + pick(a) - pick(before[i]), 0);
  // Each snapshot is INFO_READS reads per node; the idle window's rate is taken off like CPU's.
  const idleReads = before.reduce((s, b, i) => s + b.reads - idleFrom[i].reads - INFO_READS, 0) * (tookMs / IDLE_MS);
  return {
    cpuMs: total / calls,
    rawCpuMs: raw.reduce((a, b) => a + b, 0) / calls,
    commands: sum((i) => i.commands) / calls,
    socketReads: Math.max(0, sum((i) => i.reads) - INFO_READS * nodes.length - idleReads) / calls,
    memoryBytes: sum((i) => i.memoryBytes) / calls,
    shares: cpu.map((ms) => ms / total).sort((a, b) => b - a),
    throughput,
  };
}

interface NodeInfo {
  cpuMs: number;
  commands: number;
  reads: number;
  memoryBytes: number;
}

/** Socket reads of one `readInfo`: one per INFO it sends. */
const INFO_READS = 4;

async function readInfo(node: Redis): Promise<NodeInfo> {
  const text = `${await node.info('cpu')}\n${await node.info('memory')}\n${await node.info('commandstats')}\n${await node.info('stats')}`;
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? 0);
  let commands = 0;
  for (const m of text.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) commands += Number(m[1]);
  return {
    cpuMs: (field('used_cpu_user') + field('used_cpu_sys')) * 1000,
    commands,
    reads: field('total_reads_processed'),
    memoryBytes: field('used_memory'),
  };
}

export function scaleOutTable(report: ScaleOutReport): string {
  const { exec, toolCall } = report.single;
  const cluster = report.cluster.exec;
  const ceiling = (cpuMs: number, share = 1) => fmt(1000 / (cpuMs * share), 0);
  const load = [
    `| ${report.calls} execs, ${SESSIONS} sessions, ${IN_FLIGHT} in flight, multi-tenant, quotas on | Redis CPU ms (less idle; raw) | commands (script-inner included) | socket reads (less idle) | retained bytes | execs/s (this machine) |`,
    '|---|---|---|---|---|---|',
    `| one Redis, per trivial exec | ${fmt(exec.cpuMs, 3)}; ${fmt(exec.rawCpuMs, 3)} | ${fmt(exec.commands, 1)} | ${fmt(exec.socketReads, 1)} | ${fmt(exec.memoryBytes, 0)} | ${fmt(exec.throughput, 0)} |`,
    `| one Redis, per tool call (\`ls\`) | ${fmt(toolCall.cpuMs, 3)}; ${fmt(toolCall.rawCpuMs, 3)} | ${fmt(toolCall.commands, 1)} | ${fmt(toolCall.socketReads, 1)} | ${fmt(toolCall.memoryBytes, 0)} | ${fmt(toolCall.throughput, 0)} calls/s |`,
    `| 3-primary cluster, a replica each, per trivial exec (all primaries) | ${fmt(cluster.cpuMs, 3)} (${fmt(cluster.cpuMs / exec.cpuMs)}× one Redis); ${fmt(cluster.rawCpuMs, 3)} | ${fmt(cluster.commands, 1)} | ${fmt(cluster.socketReads, 1)} | ${fmt(cluster.memoryBytes, 0)} | ${fmt(cluster.throughput, 0)} |`,
    `| the same cluster without replicas (what replication costs the primaries) | ${fmt(report.cluster.withoutReplicas.cpuMs, 3)} (${fmt(report.cluster.withoutReplicas.cpuMs / exec.cpuMs)}× one Redis); ${fmt(report.cluster.withoutReplicas.rawCpuMs, 3)} | ${fmt(report.cluster.withoutReplicas.commands, 1)} | ${fmt(report.cluster.withoutReplicas.socketReads, 1)} | ${fmt(report.cluster.withoutReplicas.memoryBytes, 0)} | ${fmt(report.cluster.withoutReplicas.throughput, 0)} |`,
    `| cluster: each primary's share of the Redis CPU | ${cluster.shares.map((s) => `${fmt(s * 100, 0)} %`).join(' / ')} | | | | |`,
    `| implied ceiling at one Redis core per primary fully busy | one Redis ${ceiling(exec.cpuMs)} execs/s; 3 primaries ${ceiling(cluster.cpuMs, cluster.shares[0])} execs/s (bound by the busiest) | | | | |`,
  ].join('\n');
  const retained = [
    `| what the single Redis keeps per finished trivial exec, by key (MEMORY USAGE) | bytes |`,
    '|---|---|',
    ...report.retained.map((r) => `| ${r.kind} | ${fmt(r.bytes, 0)} |`),
    `| **all keys of the deployment** | ${fmt(allKeysBytes(report.retained), 0)} |`,
  ].join('\n');
  return `${load}\n\n${retained}\n\n${redisCostTable(report.profile, ', multi-tenant, quotas on, private Redis')}`;
}

import { availableParallelism, cpus } from 'node:os';
import { keySlot } from '@codemode/events';
import { PrivateRedisCluster } from '../test/utils/private-redis-cluster';
import { TestStack } from '../test/utils/test-stack';
import { measureCellStart } from './cell-start';
import { measureNestedCalls, TOOL_CALLS_PER_CELL } from './nested-tool-calls';
import { measureResumes } from './parked-image';
import { fmt, percentile } from './stats';

/** One published budget (SPEC §17): an operation's p50 and p99, and what a sample is. */
export interface Budget {
  operation: string;
  p50Ms: number;
  p99Ms: number;
  samples: string;
}

const FAILOVER_SESSIONS = 32;
const FAILOVER_LOAD_BEFORE_MS = 3_000;
const FAILOVER_LOAD_AFTER_MS = 12_000;

/**
 * SPEC §17's published budgets, end to end over REST on one api and one worker (the failover on a
 * private 3-primary Redis Cluster): a trivial exec, a cell start (in-process, from the prepared
 * image), a nested core tool call, a wait that resumes in memory and from an image, a replay of 10
 * calls, and the time a session goes unserved when a primary is killed under load.
 */
export async function measureBudgets(samples: number): Promise<Budget[]> {
  const budgets: Budget[] = [];
  const stack = await TestStack.start({ workers: 1 });
  const replayStack = await TestStack.start({ workers: 1, env: { CODEMODE_ALWAYS_REPLAY: '1' } });
  try {
    const { trivial, perToolCall } = await measureNestedCalls(stack.client(), 'bench-budgets', samples);
    budgets.push(row('trivial exec (`return 1+1`, POST …/exec round trip)', trivial, `${samples} execs`));
    const start = await measureCellStart(samples);
    budgets.push({
      operation: "cell start (in-process, from the prepared image, the thread's spare VM ready)",
      p50Ms: start.image.p50,
      p99Ms: start.image.p99,
      samples: `${samples} cells`,
    });
    budgets.push({
      operation: 'cell start (in-process, from the prepared image, no spare ready)',
      p50Ms: start.noSpare.p50,
      p99Ms: start.noSpare.p99,
      samples: `${samples} cells`,
    });
    budgets.push(
      row(
        `nested core tool call (\`ls({})\` in a cell, over REST)`,
        perToolCall,
        `${samples} cells of ${TOOL_CALLS_PER_CELL} calls, per call: (cell − trivial exec) ÷ ${TOOL_CALLS_PER_CELL}`,
      ),
    );
    const resumes = new Map(await measureResumes(stack, replayStack.client(), Math.max(10, Math.round(samples / 4))));
    const resumeSamples = `${Math.max(10, Math.round(samples / 4))} waits of a restartSafe cell with 10 recorded calls`;
    const [inMemory, fromImage, byReplay] = [...resumes.values()];
    budgets.push(row('resume in memory (wait → completed, the owner holds the VM)', inMemory, resumeSamples));
    budgets.push(row('resume from an image (wait → completed, the run released)', fromImage, resumeSamples));
    budgets.push(row('replay of 10 calls (wait → completed, rebuilt from the log)', byReplay, resumeSamples));
  } finally {
    await stack.stop();
    await replayStack.stop();
  }
  budgets.push(await measureFailover());
  return budgets;
}

function row(operation: string, values: number[], samples: string): Budget {
  return { operation, p50Ms: percentile(values, 50), p99Ms: percentile(values, 99), samples };
}

/**
 * A primary of a private 3-primary cluster is killed while 32 sessions each keep one exec in
 * flight. A session's unserved time: from the kill to the answer of its first exec answered
 * `completed` after the kill whose round trip was under a second (its service is back).
 */
async function measureFailover(): Promise<Budget> {
  const cluster = await PrivateRedisCluster.start();
  const stack = await TestStack.start({ workers: 1, redisClusterNodes: cluster.seeds, env: { CODEMODE_TIMEOUT_MS: '4000' } });
  try {
    const client = stack.client();
    const sessions = Array.from({ length: FAILOVER_SESSIONS }, (_, i) => `failover-${i}`);
    let killedAt = Number.POSITIVE_INFINITY;
    let stopAt = Number.POSITIVE_INFINITY;
    const servedAgain = new Map<string, number>();
    const load = async (sid: string): Promise<void> => {
      for (let n = 0; Date.now() < stopAt; n += 1) {
        const sentAt = Date.now();
        const r = await client.exec(sid, { title: 'load', code: `return ${n}` }).catch(() => null);
        const at = Date.now();
        if (at > killedAt && !servedAgain.has(sid) && r?.status === 'completed' && at - sentAt < 1000) servedAgain.set(sid, at - killedAt);
      }
    };
    const running = Promise.all(sessions.map(load));
    await new Promise((resolve) => setTimeout(resolve, FAILOVER_LOAD_BEFORE_MS));
    const [victim] = await cluster.primaries();
    const onVictim = await cluster.slotsOf(victim);
    const hit = sessions.filter((sid) => onVictim(keySlot(`${stack.prefix}:{default:${sid}}`))).length;
    killedAt = Date.now();
    await cluster.kill(victim);
    stopAt = killedAt + FAILOVER_LOAD_AFTER_MS;
    await running;
    const unserved = sessions.map((sid) => servedAgain.get(sid) ?? FAILOVER_LOAD_AFTER_MS);
    return row(
      'failover: a session unserved after a primary is killed (3-primary cluster)',
      unserved,
      `${FAILOVER_SESSIONS} sessions under load, ${hit} on the killed primary; max ${fmt(Math.max(...unserved), 0)} ms`,
    );
  } finally {
    await stack.stop();
    await cluster.cleanup();
  }
}

export function budgetsTable(budgets: Budget[]): string {
  const machine = `${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`;
  return [
    `Measured on ${machine}, ${new Date().toISOString()}.`,
    '',
    '| operation | p50 (ms) | p99 (ms) | samples |',
    '|---|---|---|---|',
    ...budgets.map((b) => `| ${b.operation} | ${fmt(b.p50Ms, 3)} | ${fmt(b.p99Ms, 3)} | ${b.samples} |`),
  ].join('\n');
}

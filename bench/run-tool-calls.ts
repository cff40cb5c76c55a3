import { Redis } from 'ioredis';
import { PrivateRedis } from '../test/utils/private-redis';
import { TestStack } from '../test/utils/test-stack';
import { measureNestedCalls, measureOneReadCell, NESTED_LS_CODE, timedExec, TOOL_CALLS_PER_CELL, TRIVIAL_CODE } from './nested-tool-calls';
import { measureCounters, type CounterCost } from './redis-counters';
import { fmt, percentile } from './stats';

const SAMPLES = Number(process.env.BENCH_TOOL_CALL_SAMPLES ?? 100);
/** Cells of each kind whose Redis counters are read. */
const COUNTED_CELLS = Number(process.env.BENCH_TOOL_CALL_CELLS ?? 50);
/** Where the worker and the API write their CPU profiles (`--cpu-prof`), when set. */
const PROFILE_DIR = process.env.BENCH_TOOL_CALL_PROFILE_DIR;
const IDLE_MS = 3_000;
const SESSION = 'bench-tool-calls';

/**
 * `npm run bench:tool-calls`: what one nested core tool call costs (issue 41 item 4, issue 40),
 * on one api and one worker over a private Redis nothing else uses: the published budget's
 * nested-`ls` row (bench/nested-tool-calls.ts), what a cell of one `ls` costs over a trivial exec
 * (what a cell that reads pays once: its claim and its end behind the read's events), then Redis's counters over cells of
 * TOOL_CALLS_PER_CELL `ls` calls against as many trivial execs, per call.
 */
async function main(): Promise<void> {
  const redis = await PrivateRedis.start();
  try {
    const env = PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${PROFILE_DIR}` } : undefined;
    const stack = await TestStack.start({ workers: 1, redisUrl: redis.url, env });
    const node = new Redis(redis.url);
    try {
      const client = stack.client();
      const { trivial, perToolCall } = await measureNestedCalls(client, SESSION, SAMPLES);
      const oneRead = await measureOneReadCell(client, SESSION, SAMPLES);
      const counted = (code: string): Promise<CounterCost> =>
        measureCounters(COUNTED_CELLS, () => timedExec(client, SESSION, code), node, { idleMs: IDLE_MS });
      const plain = await counted(TRIVIAL_CODE);
      const calls = await counted(NESTED_LS_CODE);
      const perCall = (pick: (cost: CounterCost) => number): string => fmt((pick(calls) - pick(plain)) / TOOL_CALLS_PER_CELL, 2);
      process.stdout.write(
        [
          `| measure (${SAMPLES} pairs; Redis: ${COUNTED_CELLS} cells of each) | p50 | p99 |`,
          '|---|---|---|',
          `| trivial exec (ms) | ${fmt(percentile(trivial, 50), 3)} | ${fmt(percentile(trivial, 99), 3)} |`,
          `| nested \`ls({})\`, per call: (cell − trivial exec) ÷ ${TOOL_CALLS_PER_CELL} (ms) | ${fmt(percentile(perToolCall, 50), 3)} | ${fmt(percentile(perToolCall, 99), 3)} |`,
          `| a cell of one \`ls({})\` − trivial exec (ms): its claim, its read, its end | ${fmt(percentile(oneRead, 50), 3)} | ${fmt(percentile(oneRead, 99), 3)} |`,
          '',
          '| Redis per `ls` call | CPU µs (less idle; raw) | socket reads | commands (script-inner included) |',
          '|---|---|---|---|',
          `| | ${perCall((c) => c.cpuUs)}; ${perCall((c) => c.rawCpuUs)} | ${perCall((c) => c.socketReads)} | ${perCall((c) => c.commands)} |`,
          '',
          `Commands per \`ls\` call by name: ${byName(calls, plain)}`,
        ].join('\n') + '\n',
      );
    } finally {
      node.disconnect();
      await stack.stop();
    }
  } finally {
    await redis.cleanup();
  }
}

/** Per call, each command's calls in the tool-calling cells less the trivial execs', largest first. */
function byName(calls: CounterCost, plain: CounterCost): string {
  const base = new Map(plain.commandsByName.map((c) => [c.name, c.calls]));
  return calls.commandsByName
    .map((c) => ({ name: c.name, perCall: (c.calls - (base.get(c.name) ?? 0)) / TOOL_CALLS_PER_CELL }))
    .filter((c) => Math.abs(c.perCall) >= 0.05)
    .sort((a, b) => b.perCall - a.perCall)
    .map((c) => `${c.name.toUpperCase()} ${fmt(c.perCall, 2)}`)
    .join(', ');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});

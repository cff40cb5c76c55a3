import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { TestStack } from '../test/utils/test-stack';
import * as thisBuild from '../test/utils/test-stack';
import { processCpuMs } from './cpu-usage';
import { fmt, measureThroughput, percentile } from './stats';

const EXECS = Number(process.env.BENCH_LOG_EXECS ?? 3000);
const ROUNDS = Number(process.env.BENCH_LOG_ROUNDS ?? 4);
const IN_FLIGHT = 64;
const SESSIONS = 16;

/** A service measured: a build's stack (this one's, or another built checkout's) at a log level. */
interface Variant {
  name: string;
  start: (env: Record<string, string>) => Promise<TestStack>;
  level: string;
}

interface Round {
  throughput: number;
  api: number;
  worker: number;
  bench: number;
}

/** This build, and, when `baseDir` names another built checkout, its stack as "base". */
function variants(baseDir: string | undefined): Variant[] {
  const builds: { name: string; stacks: typeof thisBuild }[] = [{ name: 'this build', stacks: thisBuild }];
  if (baseDir) {
    const load = createRequire(__filename);
    builds.unshift({
      name: `base (${baseDir})`,
      stacks: load(join(resolve(baseDir), 'dist/test/utils/test-stack.js')) as typeof thisBuild,
    });
  }
  return [
    ...builds.map((b) => ({
      name: `${b.name}, LOG_LEVEL=info`,
      level: 'info',
      start: (env: Record<string, string>) => b.stacks.TestStack.start({ workers: 1, env }),
    })),
    { name: 'this build, LOG_LEVEL=error', level: 'error', start: (env) => thisBuild.TestStack.start({ workers: 1, env }) },
  ];
}

/** Trivial execs at IN_FLIGHT after two unmeasured rounds of as many; CPU ms per exec of each process. */
async function measure(variant: Variant): Promise<Round> {
  const stack = await variant.start({ LOG_LEVEL: variant.level });
  try {
    const client = stack.client();
    let n = 0;
    const exec = async (): Promise<void> => {
      const i = n++;
      const result = await client.exec(`log-cost-${i % SESSIONS}`, { title: 'add', code: 'return 1+1' });
      if (result.status !== 'completed' || result.value !== 2) throw new Error(`log cost bench exec: ${JSON.stringify(result)}`);
    };
    for (let warm = 0; warm < 2; warm += 1) await measureThroughput(EXECS, IN_FLIGHT, exec);
    const api = processCpuMs(stack.api.pid);
    const worker = processCpuMs(stack.workers[0].pid);
    const bench = process.cpuUsage();
    const throughput = await measureThroughput(EXECS, IN_FLIGHT, exec);
    const spent = process.cpuUsage(bench);
    return {
      throughput,
      api: (processCpuMs(stack.api.pid) - api) / EXECS,
      worker: (processCpuMs(stack.workers[0].pid) - worker) / EXECS,
      bench: (spent.user + spent.system) / 1000 / EXECS,
    };
  } finally {
    await stack.stop();
  }
}

/**
 * `npm run bench:log`: what a trivial exec's log lines cost the processes (one access line in the
 * api and one line in the worker per exec at `info`), against the same service at `error`, the
 * stacks started in turns (the order reversed every other round). `BENCH_LOG_BASE=<another built
 * checkout>` adds that checkout's service at `info`: how a change to the logging path is weighed.
 */
async function main(): Promise<void> {
  const all = variants(process.env.BENCH_LOG_BASE);
  const rounds = new Map<string, Round[]>(all.map((v) => [v.name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const variant of round % 2 === 0 ? all : [...all].reverse()) {
      const measured = await measure(variant);
      rounds.get(variant.name)!.push(measured);
      process.stderr.write(`round ${round + 1}, ${variant.name}: ${JSON.stringify(measured)}\n`);
    }
  }
  const median = (rs: Round[], key: keyof Round): number =>
    percentile(
      rs.map((r) => r[key]),
      50,
    );
  process.stdout.write(
    [
      `| trivial execs at ${IN_FLIGHT} in flight (${EXECS} after 2 unmeasured rounds; median of ${ROUNDS} rounds in turns) | throughput (/s) | api CPU ms per exec | worker | bench client |`,
      '|---|---|---|---|---|',
      ...all.map((v) => {
        const rs = rounds.get(v.name)!;
        return `| ${v.name} | ${fmt(median(rs, 'throughput'), 0)} | ${fmt(median(rs, 'api'), 3)} | ${fmt(median(rs, 'worker'), 3)} | ${fmt(median(rs, 'bench'), 3)} |`;
      }),
    ].join('\n') + '\n',
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});

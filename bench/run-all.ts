import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { REDIS_URL, TestStack } from '../test/utils/test-stack';
import { BullmqEcho } from './bullmq-echo';
import { QuickjsBaseline } from './quickjs-baseline';
import { Redis } from 'ioredis';
import { cpuDuring } from './cpu-usage';
import { fmt, measureThroughput, percentile } from './stats';
import { measureHostCalls } from './host-calls';
import { ConfinedSpawn, spawnTrue } from './shell-spawn';
import { measureReplay } from './replay';
import { fairnessTable, measureFairness } from './fairness';
import { cellStartTable, measureCellStart } from './cell-start';
import { measureRedisCost, redisCostTable } from './redis-cost';
import { measureParkedImages } from './parked-image';
import { fateIsolationTable, measureFateIsolation } from './fate-isolation';
import { measureScaleOut, scaleOutTable } from './scale-out';
import { budgetsTable, measureBudgets } from './budgets';
import { measureProfile, profileTable } from './cpu-profile';
import { garbageTable, measureGarbage } from './garbage';

const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 400);
const THROUGHPUT_TOTAL = Number(process.env.BENCH_THROUGHPUT_TOTAL ?? 3000);
/** Unmeasured throughput rounds each pipeline runs first, at least one (see `main`). */
const WARM_UP_ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_WARM_UP_ROUNDS ?? 2)) || 1);
const IN_FLIGHT = 64;
const REPLAY_SAMPLES = Number(process.env.BENCH_REPLAY_SAMPLES ?? 30);
const CELL_START_SAMPLES = Number(process.env.BENCH_CELL_START_SAMPLES ?? 300);
const REDIS_COST_EXECS = Number(process.env.BENCH_REDIS_COST_EXECS ?? 200);
const PARKED_IMAGE_SAMPLES = Number(process.env.BENCH_PARKED_IMAGE_SAMPLES ?? 30);
const SCALE_OUT_EXECS = Number(process.env.BENCH_SCALE_OUT_EXECS ?? 3000);
const BUDGET_SAMPLES = Number(process.env.BENCH_BUDGET_SAMPLES ?? 200);
const PROFILE_EXECS = Number(process.env.BENCH_PROFILE_EXECS ?? 3000);
const GARBAGE_EXECS = Number(process.env.BENCH_GARBAGE_EXECS ?? 2000);
const ROOT = join(__dirname, '..', '..'); // dist/bench → repository root

/**
 * Exec round trip beside a naive BullMQ echo and a bare QuickJS eval, all in one run on the same
 * Redis: the machines are shared and noisy, so only ratios within one run mean anything.
 */
async function main(): Promise<void> {
  // The service as deployed: the default LOG_LEVEL (info), one line per cell.
  const stack = await TestStack.start({ workers: 1 });
  // The same service logging errors only: what `info` per cell costs.
  const quietStack = await TestStack.start({ workers: 1, env: { LOG_LEVEL: 'error' } });
  const replayStack = await TestStack.start({ workers: 1, env: { CODEMODE_ALWAYS_REPLAY: '1' } });
  // The same service with shell confinement off: what bubblewrap adds to shell/exec (issue 11).
  const unconfinedStack = await TestStack.start({ workers: 1, env: { CODEMODE_SHELL_SANDBOX: 'none' } });
  const confinedSpawn = new ConfinedSpawn();
  const echo = await BullmqEcho.start(REDIS_URL, `{bench-${randomBytes(4).toString('hex')}}`, IN_FLIGHT);
  const quickjs = await QuickjsBaseline.start();
  const client = stack.client();
  const addCell = async (c: ReturnType<TestStack['client']>): Promise<unknown> => {
    const result = await c.exec('bench', { title: 'add', code: 'return 1+1' });
    if (result.status !== 'completed' || result.value !== 2) throw new Error(`unexpected result ${JSON.stringify(result)}`);
    return result;
  };
  const execCell = (): Promise<unknown> => addCell(client);
  const quietClient = quietStack.client();
  const quietExec = (): Promise<unknown> => addCell(quietClient);
  try {
    // V8 goes on optimizing the api's and the worker's code for thousands of execs after they
    // start: measured on this machine, CPU per exec after 6,000 execs was ~0.6× what it was after
    // 200; the echo gains about as much). So every stack and the echo first run WARM_UP_ROUNDS throughput
    // rounds, unmeasured but for the first one's CPU (reported beside the steady figures): the
    // echo, the exec stack and the stacks compared with it (replay, shell confinement: exec rounds,
    // so their HTTP and run paths are as warm as its). The quiet stack gets one more round right
    // before its measured one, as the exec stack runs ~1,300 more execs before its own.
    const redisPid = await redisServerPid();
    const throughputRound = (op: () => Promise<unknown>): Promise<number> => measureThroughput(THROUGHPUT_TOTAL, IN_FLIGHT, op);
    const firstEchoCpu = await cpuDuring({ bench: process.pid, redis: redisPid }, () => throughputRound(() => echo.roundTrip()));
    const firstExecCpu = await cpuDuring({ bench: process.pid, api: stack.api.pid, worker: stack.workers[0].pid, redis: redisPid }, () =>
      throughputRound(execCell),
    );
    const replayClient = replayStack.client();
    const unconfinedClient = unconfinedStack.client();
    for (let round = 0; round < WARM_UP_ROUNDS; round += 1) {
      if (round > 0) await throughputRound(() => echo.roundTrip());
      if (round > 0) await throughputRound(execCell);
      await throughputRound(quietExec);
      await throughputRound(() => addCell(replayClient));
      await throughputRound(() => addCell(unconfinedClient));
    }
    for (let i = 0; i < 50; i += 1) {
      await echo.roundTrip();
      await execCell();
      await quickjs.evalFresh();
    }
    // Alternate the two pipelines sample by sample so drift in machine load hits both alike.
    const echoSamples: number[] = [];
    const execSamples: number[] = [];
    const quickjsSamples: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i += 1) {
      let t = performance.now();
      await echo.roundTrip();
      echoSamples.push(performance.now() - t);
      t = performance.now();
      await execCell();
      execSamples.push(performance.now() - t);
      t = performance.now();
      await quickjs.evalFresh();
      quickjsSamples.push(performance.now() - t);
    }
    // Suspension: park with yield_control, then resume through wait (issue: one Redis round trip at most beyond exec).
    const parkSamples: number[] = [];
    const waitSamples: number[] = [];
    const plainSamples: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i += 1) {
      let t = performance.now();
      await execCell();
      plainSamples.push(performance.now() - t);
      t = performance.now();
      const parked = await client.exec('bench-park', { title: 'park', code: 'await yield_control(); return 3' });
      parkSamples.push(performance.now() - t);
      if (parked.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(parked)}`);
      t = performance.now();
      const resumed = await client.wait('bench-park', parked.runId);
      waitSamples.push(performance.now() - t);
      if (resumed.status !== 'completed') throw new Error(`expected completed, got ${JSON.stringify(resumed)}`);
    }
    // Shell: shell/exec of `true` over REST, confined and not, vs spawning `true` in-process, bare and in a sandbox.
    const shellSamples: number[] = [];
    const unconfinedShellSamples: number[] = [];
    const spawnSamples: number[] = [];
    const confinedSpawnSamples: number[] = [];
    const shellExec = async (c: typeof client, samples: number[]): Promise<void> => {
      const t = performance.now();
      const answer = await c.raw('POST', '/v1/sessions/bench-shell/shell/exec', { body: JSON.stringify({ command: 'true' }) });
      samples.push(performance.now() - t);
      const status = (answer.body as { details?: { status?: string } }).details?.status;
      if (answer.status !== 200 || status !== 'completed')
        throw new Error(`shell/exec answered ${answer.status} ${JSON.stringify(answer.body)}`);
    };
    for (let i = 0; i < 100; i += 1) {
      let t = performance.now();
      await spawnTrue();
      spawnSamples.push(performance.now() - t);
      t = performance.now();
      await confinedSpawn.run();
      confinedSpawnSamples.push(performance.now() - t);
      await shellExec(client, shellSamples);
      await shellExec(unconfinedClient, unconfinedShellSamples);
    }
    // Host calls inside a cell, through a real core tool with its events recorded (REST), per call.
    const toolCalls = 200;
    const toolSamples: number[] = [];
    const toolPids = { worker: stack.workers[0].pid, redis: redisPid };
    const toolCpu = await cpuDuring(toolPids, async () => {
      for (let i = 0; i < 5; i += 1) {
        const t = performance.now();
        const r = await client.exec('bench-tools', {
          title: 'ls loop',
          code: `for (let i = 0; i < ${toolCalls}; i++) await ls({}); return 1;`,
        });
        if (r.status !== 'completed') throw new Error(`tool loop failed: ${JSON.stringify(r)}`);
        toolSamples.push(((performance.now() - t) * 1000) / toolCalls);
      }
    });
    // The same calls 25 at a time: the events of calls that start or settle together are written
    // with one script call (SameTickAppends).
    const fanOutSamples: number[] = [];
    const fanOutCpu = await cpuDuring(toolPids, async () => {
      for (let i = 0; i < 5; i += 1) {
        const t = performance.now();
        const r = await client.exec('bench-tools', {
          title: 'ls fan-out',
          code: `for (let k = 0; k < ${toolCalls / 25}; k++) await Promise.all(Array.from({ length: 25 }, () => ls({}))); return 1;`,
        });
        if (r.status !== 'completed') throw new Error(`tool fan-out failed: ${JSON.stringify(r)}`);
        fanOutSamples.push(((performance.now() - t) * 1000) / toolCalls);
      }
    });
    const hostCalls = await measureHostCalls(1000);
    const cellStart = cellStartTable(await measureCellStart(CELL_START_SAMPLES));
    const replayRows = await measureReplay(client, replayStack.client(), [1, 10, 100], REPLAY_SAMPLES);
    const parkedImages = await measureParkedImages(stack, replayStack.client(), PARKED_IMAGE_SAMPLES);
    const fairness = fairnessTable(await measureFairness());
    const fateIsolation = fateIsolationTable(await measureFateIsolation());
    const scaleOut = scaleOutTable(await measureScaleOut(SCALE_OUT_EXECS));
    const budgets = budgetsTable(await measureBudgets(BUDGET_SAMPLES));
    const profile = profileTable(await measureProfile(PROFILE_EXECS, IN_FLIGHT), PROFILE_EXECS, IN_FLIGHT);
    const garbage = garbageTable(await measureGarbage(GARBAGE_EXECS));
    let echoThroughput = 0;
    let execThroughput = 0;
    const echoCpu = await cpuDuring({ bench: process.pid, redis: redisPid }, async () => {
      echoThroughput = await throughputRound(() => echo.roundTrip());
    });
    const execCpu = await cpuDuring({ bench: process.pid, api: stack.api.pid, worker: stack.workers[0].pid, redis: redisPid }, async () => {
      execThroughput = await throughputRound(execCell);
    });
    const echoThroughput2 = await throughputRound(() => echo.roundTrip());
    await throughputRound(quietExec);
    let quietThroughput = 0;
    const quietCpu = await cpuDuring(
      { bench: process.pid, api: quietStack.api.pid, worker: quietStack.workers[0].pid, redis: redisPid },
      async () => {
        quietThroughput = await throughputRound(quietExec);
      },
    );
    // Only the commands of this stack's api and worker: the shared Redis has other clients.
    const redisCost = redisCostTable(
      await measureRedisCost(REDIS_COST_EXECS, execCell, REDIS_URL, [
        { role: 'api', pid: stack.api.pid },
        { role: 'worker', pid: stack.workers[0].pid },
      ]),
    );
    const sumCpu = (cpu: Record<string, number>): number => Object.values(cpu).reduce((a, b) => a + b, 0);
    const perOp = (cpu: Record<string, number>): string =>
      Object.entries(cpu)
        .map(([name, ms]) => `${name} ${fmt(ms / THROUGHPUT_TOTAL, 3)}`)
        .join(', ');

    const rows = {
      echo: { p50: percentile(echoSamples, 50), p99: percentile(echoSamples, 99) },
      exec: { p50: percentile(execSamples, 50), p99: percentile(execSamples, 99) },
      quickjs: { p50: percentile(quickjsSamples, 50), p99: percentile(quickjsSamples, 99) },
    };
    const echoTp = (echoThroughput + echoThroughput2) / 2;
    const report = [
      '| measure | exec (`POST /v1/…/exec`, `return 1+1`) | naive BullMQ echo | exec ÷ echo | bare QuickJS fresh runtime eval |',
      '|---|---|---|---|---|',
      `| round trip p50 (ms) | ${fmt(rows.exec.p50)} | ${fmt(rows.echo.p50)} | ${fmt(rows.exec.p50 / rows.echo.p50)}× | ${fmt(rows.quickjs.p50, 3)} |`,
      `| round trip p99 (ms) | ${fmt(rows.exec.p99)} | ${fmt(rows.echo.p99)} | ${fmt(rows.exec.p99 / rows.echo.p99)}× | ${fmt(rows.quickjs.p99, 3)} |`,
      `| throughput at ${IN_FLIGHT} in flight (/s) | ${fmt(execThroughput, 0)} | ${fmt(echoTp, 0)} (${fmt(echoThroughput, 0)} before, ${fmt(echoThroughput2, 0)} after) | ${fmt(execThroughput / echoTp)}× | — |`,
      `| CPU ms per operation, by process (throughput phase) | ${perOp(execCpu)} | ${perOp(echoCpu)} | ${fmt(sumCpu(execCpu) / sumCpu(echoCpu))}× | — |`,
      `| the same exec at \`LOG_LEVEL=error\`: throughput (/s), CPU ms per exec | ${fmt(quietThroughput, 0)}; ${perOp(quietCpu)} | — | — | — |`,
      `| CPU ms per operation in the first ${THROUGHPUT_TOTAL} after start-up (V8 still optimizing; not warmed up) | ${perOp(firstExecCpu)} | ${perOp(firstEchoCpu)} | ${fmt(sumCpu(firstExecCpu) / sumCpu(firstEchoCpu))}× | — |`,
    ].join('\n');
    const suspension = [
      '| measure (same run, alternating) | p50 (ms) | p99 (ms) | ÷ plain exec p50 |',
      '|---|---|---|---|',
      `| plain exec \`return 1+1\` | ${fmt(percentile(plainSamples, 50))} | ${fmt(percentile(plainSamples, 99))} | 1.00× |`,
      `| exec that parks (\`await yield_control()\`) | ${fmt(percentile(parkSamples, 50))} | ${fmt(percentile(parkSamples, 99))} | ${fmt(percentile(parkSamples, 50) / percentile(plainSamples, 50))}× |`,
      `| wait that resumes it to completion | ${fmt(percentile(waitSamples, 50))} | ${fmt(percentile(waitSamples, 99))} | ${fmt(percentile(waitSamples, 50) / percentile(plainSamples, 50))}× |`,
    ].join('\n');
    const shellRow = (name: string, samples: number[]): string =>
      `| ${name} | ${fmt(percentile(samples, 50))} | ${fmt(percentile(samples, 99))} | ${fmt(percentile(samples, 50) / percentile(spawnSamples, 50))}× |`;
    const shellTable = [
      '| measure (same run, alternating, 100 samples) | p50 (ms) | p99 (ms) | ÷ bare spawn p50 |',
      '|---|---|---|---|',
      shellRow('`POST /v1/sessions/{sid}/shell/exec` `{"command":"true"}`, confined (bubblewrap, the default)', shellSamples),
      shellRow('the same with `CODEMODE_SHELL_SANDBOX=none`', unconfinedShellSamples),
      shellRow("bare `spawn('/bin/sh', ['-c', 'true'])` in-process", spawnSamples),
      shellRow('the same `true` in a bubblewrap sandbox built as the worker builds one, in-process', confinedSpawnSamples),
      `| confinement's cost over REST (p50, confined − none) | ${fmt(percentile(shellSamples, 50) - percentile(unconfinedShellSamples, 50))} | | |`,
    ].join('\n');
    const cpuPerCall = (cpu: Record<string, number>): string =>
      `${fmt((cpu.worker * 1000) / (5 * toolCalls), 0)}, ${fmt((cpu.redis * 1000) / (5 * toolCalls), 0)}`;
    const hostTable = [
      '| per call, inside one cell (p50 of 5 cells) | µs per call | worker, Redis CPU µs per call (all 5 cells) |',
      '|---|---|---|',
      `| guest \`await null\` (no host; the floor) | ${fmt(hostCalls.guestAwaitUs, 1)} |`,
      `| bridge round trip to an in-process no-op host tool (${hostCalls.calls} sequential calls) | ${fmt(hostCalls.bridgeNoopUs, 1)} (CPU ${fmt(hostCalls.bridgeNoopCpuUs, 1)}) |`,
      `| bare postMessage round trip, worker thread ⇄ main thread (the floor under a bridge call) | ${fmt(hostCalls.threadRoundTripUs, 1)} |`,
      `| the same, two cells at once on the one thread (a rescue image of the other run at each switch) | ${fmt(hostCalls.alternatingNoopUs, 1)} |`,
      `| the same, each of the two VMs holding ~16 MiB (${hostCalls.heldCalls} calls a cell) | ${fmt(hostCalls.alternatingHeldNoopUs, 1)} |`,
      `| core tool \`ls({})\` over REST, with \`tool.called\`/\`tool.settled\` appended per call (${toolCalls} calls) | ${fmt(percentile(toolSamples, 50), 1)} | ${cpuPerCall(toolCpu)} |`,
      `| the same calls 25 at a time (\`Promise.all\`), per call | ${fmt(percentile(fanOutSamples, 50), 1)} | ${cpuPerCall(fanOutCpu)} |`,
    ].join('\n');
    const replayTable = [
      `| recorded tool calls before the park (${REPLAY_SAMPLES} samples each) | wait, owner resumes (p50 ms) | wait, rebuilt by replay (p50 ms) | replay p99 (ms) | replay − owner (p50 ms) | ÷ owner |`,
      '|---|---|---|---|---|---|',
      ...replayRows.map(
        (r) =>
          `| ${r.calls} | ${fmt(r.ownerWaitP50)} | ${fmt(r.replayWaitP50)} | ${fmt(r.replayWaitP99)} | ${fmt(r.replayWaitP50 - r.ownerWaitP50)} | ${fmt(r.replayWaitP50 / r.ownerWaitP50)}× |`,
      ),
    ].join('\n');
    process.stdout.write(
      `${report}\n\n${redisCost}\n\n${cellStart}\n\n${suspension}\n\n${shellTable}\n\n${hostTable}\n\n${replayTable}\n\n${parkedImages}\n\n${fairness}\n\n${fateIsolation}\n\n${scaleOut}\n\n${budgets}\n\n${profile}\n\n${garbage}\n`,
    );
    const machine = `${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`;
    const section = [
      '## Exec round trip vs a naive BullMQ echo',
      '',
      `Command: \`npm run bench\` (${SEQUENTIAL} sequential samples each, alternating; ${THROUGHPUT_TOTAL} operations for throughput; the echo and every stack first ran ${WARM_UP_ROUNDS} unmeasured throughput rounds of ${THROUGHPUT_TOTAL} trivial execs or round trips).`,
      `Run: ${new Date().toISOString()} on ${machine}; one api + one worker (2 sandbox threads) on the local Redis; echo worker concurrency ${IN_FLIGHT}.`,
      '',
      report,
      '',
      '## Redis work per exec, by script',
      '',
      redisCost,
      '',
      '## Cell start: from the prepared image vs from scratch vs bare QuickJS',
      '',
      cellStart,
      '',
      '## Park and resume vs plain exec',
      '',
      suspension,
      '',
      '## Shell exec vs a bare spawn',
      '',
      shellTable,
      '',
      '## Host-call overhead',
      '',
      hostTable,
      '',
      '## Rebuilding a parked run by replay',
      '',
      replayTable,
      '',
      '## Durable parked runs: images, park cost, resume paths',
      '',
      parkedImages,
      '',
      '## Fairness between tenants',
      '',
      fairness,
      '',
      '## Fate isolation: another tenant under attack',
      '',
      fateIsolation,
      '',
      '## Scale-out: one Redis and a 3-primary Redis Cluster',
      '',
      scaleOut,
      '',
      '## Published budgets (SPEC §17)',
      '',
      budgets,
      '',
      '## Where the CPU of a trivial exec goes, by process and function',
      '',
      profile,
      '',
      '## Garbage per exec (issue 41)',
      '',
      garbage,
      '',
    ].join('\n');
    writeFileSync(join(ROOT, 'docs', 'bench-latest.md'), section);
  } finally {
    await echo.close();
    await stack.stop();
    await quietStack.stop();
    await replayStack.stop();
    await unconfinedStack.stop();
    confinedSpawn.close();
  }
}

/** The local Redis server's pid, to count its CPU time too. */
async function redisServerPid(): Promise<number> {
  const redis = new Redis(REDIS_URL);
  try {
    const info = await redis.info('server');
    return Number(/process_id:(\d+)/.exec(info)?.[1] ?? 0);
  } finally {
    redis.disconnect();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});

import { Worker } from 'node:worker_threads';
import type { Limits } from '@codemode/contracts';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { SandboxPool } from '@codemode/sandbox';
import type { CellOutcome } from '@codemode/cells';

const LIMITS: Limits = { ...SPEC_DEFAULT_LIMITS, timeoutMs: 60_000 };

/** Calls per cell of the two cells holding ~16 MiB each (`alternatingHeldNoopUs`). */
const HELD_CALLS = 100;

const NOOP_CATALOG_JSON = JSON.stringify({
  globals: [{ metadata: { callableName: 'noop', toolName: 'noop', description: 'does nothing', source: 'openclaw' }, replaySafe: true }],
  mcp: [],
});

export interface HostCallReport {
  calls: number;
  guestAwaitUs: number;
  bridgeNoopUs: number;
  /** The floor under any bridge call: a bare postMessage round trip between a thread and the main thread. */
  threadRoundTripUs: number;
  /** CPU of the whole process (both threads) per bridge call. */
  bridgeNoopCpuUs: number;
  /** Two cells making the same calls at once on the one thread: per call of either. */
  alternatingNoopUs: number;
  /** The same, each cell holding ~16 MiB (a 8 M-character string) in its VM, making `heldCalls` calls. */
  alternatingHeldNoopUs: number;
  heldCalls: number;
}

/**
 * Per-call cost inside one cell: `await null` (a guest microtask, the floor) and a bridge round
 * trip to an in-process no-op host tool (guest → thread → main thread → back), each the p50 of
 * several cells making `calls` sequential awaits. Then two such cells at once on the one thread:
 * every switch from one run to the other takes a rescue image of the run switched away from
 * (SPEC §10 "Sandbox threads"), so the difference to one cell alone is that capture's cost on the
 * exec path, with small VMs and with VMs holding ~16 MiB.
 */
export async function measureHostCalls(calls: number, repeats = 5): Promise<HostCallReport> {
  const pool = await SandboxPool.start({ threads: 1 });
  const host = { dispatch: async () => ({}) };
  let runs = 0;
  const runCell = async (code: string): Promise<void> => {
    const outcome: CellOutcome = await pool.run(
      { runId: `bench-${(runs += 1)}`, code, limits: LIMITS, catalogJson: NOOP_CATALOG_JSON },
      host,
    );
    if (outcome.status !== 'completed') throw new Error(`bench cell failed: ${JSON.stringify(outcome)}`);
  };
  /** p50 µs per call over `repeats` cells of `made` calls, and the process's CPU µs per call over all of them. */
  const perCall = async (code: string, together = 1, made = calls): Promise<{ us: number; cpuUs: number }> => {
    const samples: number[] = [];
    const cpuStart = process.cpuUsage();
    for (let i = 0; i < repeats; i += 1) {
      const started = performance.now();
      await Promise.all(Array.from({ length: together }, () => runCell(code)));
      samples.push(((performance.now() - started) * 1000) / (made * together));
    }
    const cpu = process.cpuUsage(cpuStart);
    samples.sort((a, b) => a - b);
    return { us: samples[Math.floor(samples.length / 2)], cpuUs: (cpu.user + cpu.system) / (repeats * made * together) };
  };
  const noopsOf = (count: number): string => `for (let i = 0; i < ${count}; i++) await noop({}); return 1;`;
  const noops = noopsOf(calls);
  // Each call of two cells holding ~16 MiB takes an image of the other (~14–40 ms here): fewer
  // calls, so the two cells end within their 60 s budget on a slow day too.
  const heldCalls = Math.min(calls, HELD_CALLS);
  try {
    const guestAwaitUs = (await perCall(`for (let i = 0; i < ${calls}; i++) await null; return 1;`)).us;
    const { us: bridgeNoopUs, cpuUs: bridgeNoopCpuUs } = await perCall(noops);
    const threadRoundTripUs = await bareThreadRoundTrip(calls * repeats);
    const alternatingNoopUs = (await perCall(noops, 2)).us;
    const alternatingHeldNoopUs = (
      await perCall(`const held = "x".repeat(8e6); ${noopsOf(heldCalls).replace('return 1', 'return held.length')}`, 2, heldCalls)
    ).us;
    return { calls, guestAwaitUs, bridgeNoopUs, threadRoundTripUs, bridgeNoopCpuUs, alternatingNoopUs, alternatingHeldNoopUs, heldCalls };
  } finally {
    await pool.close();
  }
}

/** Thread side of `bareThreadRoundTrip`: asks, waits for the answer, asks again. */
const PING_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
let left = workerData.rounds;
const started = performance.now();
parentPort.on('message', () => {
  left -= 1;
  if (left > 0) parentPort.postMessage({ id: left, args: '{}' });
  else parentPort.postMessage({ doneUs: ((performance.now() - started) * 1000) / workerData.rounds });
});
parentPort.postMessage({ id: left, args: '{}' });
`;

/**
 * µs per round trip of a small message from a worker thread to the main thread and back, nothing
 * else done: the wake-ups of two threads, which every bridge call pays at least.
 */
async function bareThreadRoundTrip(rounds: number): Promise<number> {
  const thread = new Worker(PING_THREAD, { eval: true, workerData: { rounds } });
  try {
    return await new Promise<number>((resolve, reject) => {
      thread.on('error', reject);
      thread.on('message', (message: { doneUs?: number }) => {
        if (message.doneUs !== undefined) resolve(message.doneUs);
        else thread.postMessage({ ok: true, value: {} });
      });
    });
  } finally {
    await thread.terminate();
  }
}

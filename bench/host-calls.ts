import type { Limits } from '@codemode/contracts';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { SandboxPool } from '@codemode/sandbox';
import type { CellOutcome } from '@codemode/cells';

const LIMITS: Limits = { ...SPEC_DEFAULT_LIMITS, timeoutMs: 60_000 };

const NOOP_CATALOG_JSON = JSON.stringify({
  globals: [{ metadata: { callableName: 'noop', toolName: 'noop', description: 'does nothing', source: 'openclaw' }, replaySafe: true }],
  mcp: [],
});

export interface HostCallReport {
  calls: number;
  guestAwaitUs: number;
  bridgeNoopUs: number;
  /** Two cells making the same calls at once on the one thread: per call of either. */
  alternatingNoopUs: number;
  /** The same, each cell holding ~16 MiB (a 8 M-character string) in its VM. */
  alternatingHeldNoopUs: number;
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
  const perCall = async (code: string, together = 1): Promise<number> => {
    const samples: number[] = [];
    for (let i = 0; i < repeats; i += 1) {
      const started = performance.now();
      await Promise.all(Array.from({ length: together }, () => runCell(code)));
      samples.push(((performance.now() - started) * 1000) / (calls * together));
    }
    samples.sort((a, b) => a - b);
    return samples[Math.floor(samples.length / 2)];
  };
  const noops = `for (let i = 0; i < ${calls}; i++) await noop({}); return 1;`;
  try {
    const guestAwaitUs = await perCall(`for (let i = 0; i < ${calls}; i++) await null; return 1;`);
    const bridgeNoopUs = await perCall(noops);
    const alternatingNoopUs = await perCall(noops, 2);
    const alternatingHeldNoopUs = await perCall(`const held = "x".repeat(8e6); ${noops.replace('return 1', 'return held.length')}`, 2);
    return { calls, guestAwaitUs, bridgeNoopUs, alternatingNoopUs, alternatingHeldNoopUs };
  } finally {
    await pool.close();
  }
}

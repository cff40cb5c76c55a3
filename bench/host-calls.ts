import type { Limits } from '@codemode/contracts';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { SandboxPool, type CellOutcome } from '@codemode/sandbox';

const LIMITS: Limits = { ...SPEC_DEFAULT_LIMITS, timeoutMs: 60_000 };

const NOOP_CATALOG_JSON = JSON.stringify({
  globals: [{ metadata: { callableName: 'noop', toolName: 'noop', description: 'does nothing', source: 'openclaw' }, replaySafe: true }],
  mcp: [],
});

export interface HostCallReport {
  calls: number;
  guestAwaitUs: number;
  bridgeNoopUs: number;
}

/**
 * Per-call cost inside one cell: `await null` (a guest microtask, the floor) and a bridge round
 * trip to an in-process no-op host tool (guest → thread → main thread → back), each the p50 of
 * several cells making `calls` sequential awaits.
 */
export async function measureHostCalls(calls: number, repeats = 5): Promise<HostCallReport> {
  const pool = await SandboxPool.start({ threads: 1 });
  const host = { dispatch: async () => ({}) };
  const perCall = async (code: string): Promise<number> => {
    const samples: number[] = [];
    for (let i = 0; i < repeats; i += 1) {
      const started = performance.now();
      const outcome: CellOutcome = await pool.run(
        { runId: `bench-${code.length}-${i}`, code, limits: LIMITS, catalogJson: NOOP_CATALOG_JSON },
        host,
      );
      if (outcome.status !== 'completed') throw new Error(`bench cell failed: ${JSON.stringify(outcome)}`);
      samples.push(((performance.now() - started) * 1000) / calls);
    }
    samples.sort((a, b) => a - b);
    return samples[Math.floor(samples.length / 2)];
  };
  try {
    const guestAwaitUs = await perCall(`for (let i = 0; i < ${calls}; i++) await null; return 1;`);
    const bridgeNoopUs = await perCall(`for (let i = 0; i < ${calls}; i++) await noop({}); return 1;`);
    return { calls, guestAwaitUs, bridgeNoopUs };
  } finally {
    await pool.close();
  }
}

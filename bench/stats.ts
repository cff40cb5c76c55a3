/** Percentile of a list of samples (nearest rank). */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export interface LatencyReport {
  p50Ms: number;
  p99Ms: number;
  samples: number;
}

export async function measureSequential(count: number, op: () => Promise<unknown>): Promise<LatencyReport> {
  const samples: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const start = performance.now();
    await op();
    samples.push(performance.now() - start);
  }
  return { p50Ms: percentile(samples, 50), p99Ms: percentile(samples, 99), samples: samples.length };
}

/** Operations per second with `inFlight` kept running until `total` have completed. */
export async function measureThroughput(total: number, inFlight: number, op: () => Promise<unknown>): Promise<number> {
  let started = 0;
  const begin = performance.now();
  const lane = async (): Promise<void> => {
    while (started < total) {
      started += 1;
      await op();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return total / ((performance.now() - begin) / 1000);
}

export const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

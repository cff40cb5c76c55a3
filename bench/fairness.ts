import { fork } from 'node:child_process';
import { join } from 'node:path';
import { TestStack } from '../test/utils/test-stack';
import { fmt, percentile } from './stats';

const SAMPLES = Number(process.env.BENCH_FAIRNESS_SAMPLES ?? 100);
const FLOOD_LANES = 64;

export interface FairnessRow {
  scenario: string;
  p50: number;
  p99: number;
  /** Operations the flooding tenant completed meanwhile (and how many it was refused with 429). */
  flood: { done: number; refused: number } | null;
}

const TRIVIAL = 'return 1+1';
const BUSY = 'const t = Date.now(); while (Date.now() - t < 50) {} return 1';

/**
 * SPEC §10 fairness: tenant `victim`'s trivial exec, sequentially, while tenant `flood` keeps 64
 * calls going from another process (trivial cells, then CPU-busy ones), against the same exec on
 * an idle deployment. A polite flood waits out `Retry-After` after a 429 (it runs at its quotas);
 * a greedy one retries at once, so the API spends its time refusing it.
 */
export async function measureFairness(): Promise<FairnessRow[]> {
  const stack = await TestStack.start({ workers: 1, apiKeys: 'bench-victim:victim,bench-flood:flood' });
  try {
    const victim = stack.client('bench-victim');
    const victimExec = async (): Promise<void> => {
      const r = await victim.exec('v', { title: 'add', code: 'return 1+1' });
      if (r.status !== 'completed') throw new Error(`victim exec: ${JSON.stringify(r)}`);
    };
    for (let i = 0; i < 30; i += 1) {
      await victimExec();
      await new Promise((resolve) => setTimeout(resolve, VICTIM_INTERVAL_MS));
    }
    const rows: FairnessRow[] = [{ scenario: 'idle deployment', ...(await sample(victimExec)), flood: null }];
    for (const [scenario, code, manner] of [
      ['another tenant floods trivial cells, honouring Retry-After', TRIVIAL, 'polite'],
      ['another tenant floods CPU-busy cells (~50 ms of guest CPU each), honouring Retry-After', BUSY, 'polite'],
      ['another tenant floods trivial cells, retrying every 429 at once', TRIVIAL, 'greedy'],
    ] as const) {
      const flood = await startFlood(stack.baseUrl, code, manner);
      await new Promise((r) => setTimeout(r, 500));
      const measured = await sample(victimExec);
      rows.push({ scenario, ...measured, flood: await flood.stop() });
    }
    return rows;
  } finally {
    await stack.stop();
  }
}

/** One victim exec started at most this often: 40/s, under its own rate quota (50/s, bursts of 100), which a fast deployment's back-to-back execs exceed. */
const VICTIM_INTERVAL_MS = 25;

async function sample(op: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    const t = performance.now();
    await op();
    const took = performance.now() - t;
    samples.push(took);
    if (took < VICTIM_INTERVAL_MS) await new Promise((resolve) => setTimeout(resolve, VICTIM_INTERVAL_MS - took));
  }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function startFlood(
  baseUrl: string,
  code: string,
  manner: 'polite' | 'greedy',
): Promise<{ stop(): Promise<{ done: number; refused: number }> }> {
  const child = fork(join(__dirname, 'flood-client.js'), [baseUrl, 'bench-flood', code, String(FLOOD_LANES), manner], { stdio: 'ignore' });
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  return {
    stop: () =>
      new Promise((resolve) => {
        child.once('message', (counts) => {
          child.kill();
          resolve(counts as { done: number; refused: number });
        });
        child.send('stop');
      }),
  };
}

export function fairnessTable(rows: FairnessRow[]): string {
  const idle = rows[0].p50;
  return [
    `| victim tenant's \`return 1+1\` exec (${SAMPLES} sequential samples) | p50 (ms) | p99 (ms) | p50 ÷ idle p50 | flooding tenant: completed / refused 429 |`,
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.p50 / idle)}× | ${r.flood ? `${r.flood.done} / ${r.flood.refused}` : '—'} |`,
    ),
  ].join('\n');
}

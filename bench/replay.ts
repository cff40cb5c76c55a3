import type { CodeModeClient } from '@codemode/client';
import { percentile } from './stats';

export interface ReplayRow {
  calls: number;
  ownerWaitP50: number;
  replayWaitP50: number;
  replayWaitP99: number;
}

/**
 * Time to rebuild a parked run by replay (SPEC §6): a restartSafe cell makes `calls` recorded
 * `ls` calls, parks, and is waited on: once on a stack that keeps the VM (the owner resumes it),
 * once on a stack with CODEMODE_ALWAYS_REPLAY=1 (a worker replays it from the log first).
 * Samples alternate so machine load hits both alike.
 */
export async function measureReplay(
  owner: CodeModeClient,
  replay: CodeModeClient,
  callCounts: number[],
  samples: number,
): Promise<ReplayRow[]> {
  const rows: ReplayRow[] = [];
  for (const calls of callCounts) {
    const code = `for (let i = 0; i < ${calls}; i++) await ls({}); await yield_control(); return ${calls};`;
    const ownerSamples: number[] = [];
    const replaySamples: number[] = [];
    for (let i = 0; i < samples; i += 1) {
      ownerSamples.push(await timedWait(owner, code, calls));
      replaySamples.push(await timedWait(replay, code, calls));
    }
    rows.push({
      calls,
      ownerWaitP50: percentile(ownerSamples, 50),
      replayWaitP50: percentile(replaySamples, 50),
      replayWaitP99: percentile(replaySamples, 99),
    });
  }
  return rows;
}

async function timedWait(client: CodeModeClient, code: string, calls: number): Promise<number> {
  const parked = await client.exec('bench-replay', { title: 'replay', code, restartSafe: true });
  if (parked.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(parked)}`);
  const t = performance.now();
  const done = await client.wait('bench-replay', parked.runId);
  const elapsed = performance.now() - t;
  if (done.status !== 'completed' || done.value !== calls) throw new Error(`replayed run did not complete: ${JSON.stringify(done)}`);
  return elapsed;
}

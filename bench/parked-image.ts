import type { CodeModeClient } from '@codemode/client';
import { KeySpace, ParkedImageStore, RunLedger } from '@codemode/events';
import { SandboxPool, type CellRunRequest } from '@codemode/sandbox';
import { emptyTelemetry, type CellOutcome } from '@codemode/cells';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { Redis } from 'ioredis';
import { REDIS_URL, type TestStack } from '../test/utils/test-stack';
import { fmt, percentile } from './stats';

const KIB = 1024;
const CELLS = {
  tiny: 'await yield_control(); return 1',
  '20 000 small objects':
    'const rows = Array.from({ length: 20000 }, (_, i) => ({ i, s: "row" + i })); await yield_control(); return rows.length',
};
/** A replay-safe cell with recorded calls before its park, so all three resume paths apply to it. */
const RESUME_CELL = 'for (let i = 0; i < 10; i++) await ls({}); await yield_control(); return 10;';

interface SizeRow {
  cell: string;
  rawBytes: number;
  imageBytes: number;
  parkMs: { plain: number; imaged: number };
  writeMs: number;
  redisBytes: number;
}

/**
 * SPEC §12 measures, all in one run: a parked run's image size (raw non-zero 4 KiB pages vs the
 * compressed image) for a tiny cell and one holding 20 000 small objects; the park leg with and
 * without capturing the image, and the park's write to Redis (run.parked with its image); Redis memory per parked run
 * (`MEMORY USAGE` of the image key); and a wait that resumes a parked run in memory (its owner),
 * from its image (the run released, so a worker restores it), or by replay (CODEMODE_ALWAYS_REPLAY).
 */
export async function measureParkedImages(stack: TestStack, replay: CodeModeClient, samples: number): Promise<string> {
  const sizes = await measureSizes(stack.prefix, Math.max(5, Math.round(samples / 2)));
  const resumes = await measureResumes(stack, replay, samples);
  const sizeTable = [
    `| parked cell (in-process park leg, ${Math.max(5, Math.round(samples / 2))} samples) | raw non-zero pages (KiB) | compressed image (KiB) | park leg p50 without image (ms) | with image capture (ms) | park write to Redis with its image p50 (ms) | Redis memory per parked run (KiB) |`,
    '|---|---|---|---|---|---|---|',
    ...sizes.map(
      (r) =>
        `| ${r.cell} | ${fmt(r.rawBytes / KIB, 0)} | ${fmt(r.imageBytes / KIB, 0)} | ${fmt(r.parkMs.plain)} | ${fmt(r.parkMs.imaged)} | ${fmt(r.writeMs)} | ${fmt(r.redisBytes / KIB, 0)} |`,
    ),
  ];
  const resumeTable = [
    `| wait that resumes a parked run to completion (restartSafe cell, 10 recorded \`ls\` calls, ${samples} samples, alternating) | p50 (ms) | p99 (ms) | ÷ in memory p50 |`,
    '|---|---|---|---|',
    ...resumes.map(
      ([name, values]) =>
        `| ${name} | ${fmt(percentile(values, 50))} | ${fmt(percentile(values, 99))} | ${fmt(percentile(values, 50) / percentile(resumes[0][1], 50))}× |`,
    ),
  ];
  return [...sizeTable, '', ...resumeTable].join('\n');
}

async function measureSizes(prefix: string, samples: number): Promise<SizeRow[]> {
  const pool = await SandboxPool.start({ threads: 1 });
  const redis = new Redis(REDIS_URL);
  const keys = new KeySpace(`${prefix}-bench`);
  const images = new ParkedImageStore(redis, keys);
  const runs = new RunLedger(redis, keys);
  const ref = { tenant: 'bench', sessionId: 'images' };
  let n = 0;
  const park = async (code: string, parkImage: boolean): Promise<{ outcome: CellOutcome; ms: number }> => {
    n += 1;
    const request: CellRunRequest = { runId: `bench-${n}`, code, limits: { ...SPEC_DEFAULT_LIMITS }, parkImage };
    const t = performance.now();
    const outcome = await pool.run(request);
    const ms = performance.now() - t;
    pool.discard(request.runId);
    if (outcome.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(outcome)}`);
    return { outcome, ms };
  };
  try {
    const rows: SizeRow[] = [];
    for (const [cell, code] of Object.entries(CELLS)) {
      const plain: number[] = [];
      const imaged: number[] = [];
      const writes: number[] = [];
      let rawBytes = 0;
      let imageBytes = 0;
      let redisBytes = 0;
      for (let i = 0; i < samples + 2; i += 1) {
        const without = await park(code, false);
        const withImage = await park(code, true);
        const image = withImage.outcome.status === 'waiting' ? withImage.outcome.image : undefined;
        if (!image || without.outcome.status !== 'waiting') throw new Error('the parked run has no image');
        const runId = `image-${cell}-${i}`;
        await runs.request(ref, runId, {
          title: 'bench',
          code,
          restartSafe: false,
          awaitResults: false,
          limits: { ...SPEC_DEFAULT_LIMITS },
        });
        await runs.start(ref, runId, { workerId: 'bench', epoch: 1, replyTo: '' });
        const expiresAt = new Date(Date.now() + 60_000).toISOString();
        const result = { status: 'waiting', runId, reason: 'yield', replaySafe: false, telemetry: emptyTelemetry() } as const;
        const stored = { image: Buffer.from(image.bytes), ...image, epoch: 1, host: '{}' };
        const t = performance.now();
        // The park's one write: run.parked and the image (RunLedger.park).
        await runs.park(ref, { runId, epoch: 1, image: stored, data: { result, expiresAt, snapshotBytes: image.bytes.length } });
        const writeMs = performance.now() - t;
        redisBytes = (await images.memoryUsage(ref, runId)) ?? 0;
        await images.delete(ref, runId);
        if (i < 2) continue; // warm-up
        plain.push(without.ms);
        imaged.push(withImage.ms);
        writes.push(writeMs);
        rawBytes = without.outcome.snapshotBytes;
        imageBytes = image.bytes.length;
      }
      rows.push({
        cell,
        rawBytes,
        imageBytes,
        parkMs: { plain: percentile(plain, 50), imaged: percentile(imaged, 50) },
        writeMs: percentile(writes, 50),
        redisBytes,
      });
    }
    return rows;
  } finally {
    await pool.close();
    redis.disconnect();
  }
}

/** Waits that resume a parked restartSafe cell (10 recorded `ls` calls) in memory, from its image, by replay. */
export async function measureResumes(stack: TestStack, replay: CodeModeClient, samples: number): Promise<[string, number[]][]> {
  const client = stack.client();
  const redis = new Redis(REDIS_URL);
  const runs = new RunLedger(redis, new KeySpace(stack.prefix));
  const sid = 'bench-resume';
  const inMemory: number[] = [];
  const fromImage: number[] = [];
  const byReplay: number[] = [];
  try {
    for (let i = 0; i < samples; i += 1) {
      inMemory.push(await timedWait(client, sid));
      fromImage.push(
        await timedWait(client, sid, async (runId) => {
          // Released by its owner (as at an eviction or a shutdown): the wait restores its image.
          const run = await client.getRun(sid, runId);
          await runs.release({ tenant: 'default', sessionId: sid }, runId, {
            workerId: run.owner ?? '',
            epoch: run.epoch,
            reason: 'bench',
          });
        }),
      );
      byReplay.push(await timedWait(replay, sid));
    }
  } finally {
    redis.disconnect();
  }
  return [
    ['in memory (the owner resumes its parked VM)', inMemory],
    ['from its image in Redis (released; a worker restores it)', fromImage],
    ['by replay from the log (CODEMODE_ALWAYS_REPLAY=1)', byReplay],
  ];
}

async function timedWait(client: CodeModeClient, sid: string, beforeWait?: (runId: string) => Promise<void>): Promise<number> {
  const parked = await client.exec(sid, { title: 'resume', code: RESUME_CELL, restartSafe: true });
  if (parked.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(parked)}`);
  await beforeWait?.(parked.runId);
  const t = performance.now();
  const done = await client.wait(sid, parked.runId);
  const elapsed = performance.now() - t;
  if (done.status !== 'completed' || done.value !== 10) throw new Error(`resumed run did not complete: ${JSON.stringify(done)}`);
  return elapsed;
}

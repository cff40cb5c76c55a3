import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { emptyTelemetry } from '@codemode/cells';
import type { CodeModeResult, SessionRef } from '@codemode/contracts';
import { KeySpace, RunLedger, ScriptLoader } from '@codemode/events';
import { PrivateRedis } from '../test/utils/private-redis';
import { fmt, percentile } from './stats';

const EXECS = Number(process.env.BENCH_TRANSCRIPT_EXECS ?? 500);
const READS = 30;

/** A trivial cell's result, as a worker records it. */
const RESULT: CodeModeResult = { status: 'completed', value: 2, replaySafe: false, telemetry: emptyTelemetry() };

interface ReadCost {
  p50Ms: number;
  redisUsec: number;
  commands: number;
  replyBytes: number;
  listBytes: number;
}

/**
 * `node dist/bench/run-transcript-read.js`: what `GET …/transcript` costs Redis for a session of
 * EXECS finished trivial execs, derived from the log (marks + one XRANGE per named event) against
 * the same entries kept whole in the list as before issue 40 (one LRANGE), on a private Redis.
 */
async function main(): Promise<void> {
  const server = await PrivateRedis.start();
  const redis = new Redis(server.url);
  try {
    const keys = new KeySpace('bench-transcript');
    const runs = new RunLedger(redis, keys);
    const derived: SessionRef = { tenant: 'bench', sessionId: 'derived' };
    for (let i = 0; i < EXECS; i += 1) {
      const runId = `cm_${randomUUID()}`;
      const data = { title: 'add', code: 'return 1+1', restartSafe: false, awaitResults: false, limits: SPEC_DEFAULT_LIMITS };
      await runs.request(derived, runId, data);
      await runs.start(derived, runId, { workerId: 'w-1', epoch: 1, replyTo: '' });
      await runs.finish(derived, runId, { epoch: 1, type: 'run.completed', result: RESULT });
    }
    // The same transcript as a release before issue 40 kept it: the entries themselves.
    const entries = (await runs.transcript(derived)) ?? [];
    const legacy: SessionRef = { tenant: 'bench', sessionId: 'legacy' };
    await redis.hset(keys.session(legacy), 'createdAt', new Date().toISOString());
    await redis.rpush(keys.transcript(legacy), ...entries.map((entry) => JSON.stringify(entry)));
    if (JSON.stringify(await runs.transcript(legacy)) !== JSON.stringify(entries)) throw new Error('the two transcripts differ');

    const rows: [string, ReadCost][] = [];
    for (const [name, ref] of [
      ['entries kept whole (before)', legacy],
      ['derived from the log (after)', derived],
    ] as const) {
      rows.push([name, await readCost(redis, runs, keys, ref)]);
    }
    const lines = [
      `| ${EXECS} finished trivial execs, ${entries.length} entries | Redis CPU per read (µs) | commands per read | reply bytes per read | p50 read (ms) | transcript list (MEMORY USAGE, B per exec) |`,
      '|---|---|---|---|---|---|',
      ...rows.map(
        ([name, c]) =>
          `| ${name} | ${fmt(c.redisUsec, 0)} | ${fmt(c.commands, 0)} | ${fmt(c.replyBytes, 0)} | ${fmt(c.p50Ms, 2)} | ${fmt(c.listBytes / EXECS, 1)} |`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    redis.disconnect();
    await server.cleanup();
  }
}

async function readCost(redis: Redis, runs: RunLedger, keys: KeySpace, ref: SessionRef): Promise<ReadCost> {
  await runs.transcript(ref);
  await redis.config('RESETSTAT');
  const samples: number[] = [];
  for (let i = 0; i < READS; i += 1) {
    const start = performance.now();
    await runs.transcript(ref);
    samples.push(performance.now() - start);
  }
  const stats = parseCommandStats(await redis.info('commandstats'));
  const list = await redis.lrange(keys.transcript(ref), 0, -1);
  // What transcript-reader.ts reads: every entry from the first named event to the last that the
  // stream still holds (its windows), and the named events folded into their runs' records (read
  // by id: lua/read-log-events.lua).
  let replyBytes = list.reduce((sum, element) => sum + Buffer.byteLength(element), 0);
  const ids = list.filter((element) => !element.startsWith('{')).map((mark) => mark.slice(2));
  const entryBytes = (fields: string[]) => fields.reduce((sum, field) => sum + Buffer.byteLength(field), 0);
  const inStream = new Set<string>();
  if (ids.length > 0) {
    for (const [id, fields] of await redis.xrange(keys.events(ref), ids[0], ids[ids.length - 1])) {
      inStream.add(id);
      replyBytes += entryBytes(fields);
    }
  }
  const folded = [...new Set(ids.filter((id) => !inStream.has(id)))];
  const pageKeys = keys.logReadKeys(ref);
  for (let i = 0; i < folded.length; i += 100) {
    const entries = (await ScriptLoader.default().run(redis, 'read-log-events', pageKeys, folded.slice(i, i + 100))) as [
      string,
      string[],
    ][];
    for (const [, fields] of entries) replyBytes += entryBytes(fields);
  }
  const listBytes = Number(await redis.memory('USAGE', keys.transcript(ref), 'SAMPLES', 0));
  // The RESETSTAT's own call and the INFO are not the reads'; EXEC's time holds its commands' again.
  const reads = [...stats].filter(([name]) => name !== 'config|resetstat' && name !== 'info' && name !== 'config');
  return {
    p50Ms: percentile(samples, 50),
    redisUsec: reads.reduce((sum, [name, s]) => sum + (name === 'exec' ? 0 : s.usec), 0) / READS,
    commands: reads.reduce((sum, [, s]) => sum + s.calls, 0) / READS,
    replyBytes,
    listBytes,
  };
}

function parseCommandStats(info: string): Map<string, { calls: number; usec: number }> {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (match) stats.set(match[1], { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return stats;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

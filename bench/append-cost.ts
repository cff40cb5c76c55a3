import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { emptyTelemetry } from '@codemode/cells';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import * as events from '@codemode/events';
import type { AppendInput } from '@codemode/events';
import type { CodeModeResult, SessionRef } from '@codemode/contracts';
import { fmt, percentile } from './stats';

/** What a build's events library must offer to be measured here (this build's, or another checkout's `dist`). */
type EventsBuild = Pick<typeof events, 'KeySpace' | 'EventLog' | 'RunLedger'>;

/** A build measured: its name in the table, and its events library. */
export interface AppendBuild {
  name: string;
  events: EventsBuild;
}

/** Per-call Redis time of one kind of append, µs (`fcall` usec ÷ calls of each round). */
export interface AppendCost {
  build: string;
  kind: string;
  p10Us: number;
  p50Us: number;
}

/** This build, and, when `baseDir` names another built checkout, its `dist` as "base". */
export function appendBuilds(baseDir: string | undefined): AppendBuild[] {
  const builds: AppendBuild[] = [{ name: 'this build', events }];
  if (baseDir) {
    const load = createRequire(__filename);
    builds.unshift({ name: `base (${baseDir})`, events: load(join(resolve(baseDir), 'dist/libs/events/src/index.js')) as EventsBuild });
  }
  return builds;
}

const called = (runId: string, n: number): AppendInput => ({
  type: 'tool.called',
  runId,
  epoch: 1,
  data: { callId: `bridge:callValue:${n}`, tool: 'ls', source: 'openclaw', inputBytes: 2 },
});
const settled = (runId: string, n: number): AppendInput => ({
  type: 'tool.settled',
  runId,
  epoch: 1,
  data: { callId: `bridge:callValue:${n}`, tool: 'ls', ok: true, durationMs: 1, resultBytes: 40, result: { entries: ['a', 'b'] } },
});

/** Each kind of append measured: one event (`append-event`), a tool call's two and a held batch of reads' (`append-events`). */
const KINDS: { kind: string; write: (log: events.EventLog, ref: SessionRef, runId: string, n: number) => Promise<unknown> }[] = [
  { kind: 'one event (`tool.called`)', write: (log, ref, runId, n) => log.append(ref, called(runId, n)) },
  { kind: "a tool call's two events, one call", write: (log, ref, runId, n) => log.appendAll(ref, [called(runId, n), settled(runId, n)]) },
  {
    kind: `${events.MAX_BATCH_EVENTS / 2} reads' events, one call (a held batch, RunEventWriter.trail)`,
    write: (log, ref, runId, n) =>
      log.appendAll(
        ref,
        Array.from({ length: events.MAX_BATCH_EVENTS / 2 }, (_, k) => [called(runId, n * 100 + k), settled(runId, n * 100 + k)]).flat(),
      ),
  },
];

/**
 * A trivial exec's Redis scripts (as the path without a bridge request runs them): its request
 * (`request-run`) and its claim and end in one (`finish-run` with a claimer), µs per exec.
 */
const EXEC_KIND = "a trivial exec's request and claimed end, per exec (`request-run` + `finish-run`)";
const EXEC_RESULT: CodeModeResult = { status: 'completed', value: 2, replaySafe: false, telemetry: emptyTelemetry() };

async function fcallStats(redis: Redis): Promise<{ calls: number; usec: number }> {
  const match = /^cmdstat_fcall:calls=(\d+),usec=(\d+)/m.exec(await redis.info('commandstats'));
  return { calls: Number(match?.[1] ?? 0), usec: Number(match?.[2] ?? 0) };
}

/**
 * Redis's own time per append call (`INFO commandstats`, `fcall`) of each build, warm, one call at
 * a time: per round and build, a new run (requested, started) takes `perRound` appends of each
 * kind, then `perRound` trivial execs are requested and ended (EXEC_KIND); builds and kinds take
 * turns within a round, so the machine's drift falls on all alike.
 * The 10th percentile of the rounds is the figure the noise moves least. `redis` is a private
 * Redis nothing else uses.
 */
export async function measureAppendCost(redis: Redis, builds: AppendBuild[], rounds: number, perRound = 50): Promise<AppendCost[]> {
  const samples = new Map<string, number[]>();
  const prefix = `bench-append-${randomUUID().slice(0, 8)}`;
  for (let round = 0; round < rounds; round += 1) {
    for (const [b, build] of builds.entries()) {
      const keys = new build.events.KeySpace(`${prefix}-${b}`);
      const log = new build.events.EventLog(redis, keys);
      const runs = new build.events.RunLedger(redis, keys);
      const ref = { tenant: 'bench', sessionId: `s-${round % 8}` };
      const keep = (kind: string, usec: number): void => {
        const key = `${build.name}\n${kind}`;
        samples.set(key, [...(samples.get(key) ?? []), usec]);
      };
      const request = (runId: string) =>
        runs.request(ref, runId, {
          title: 'bench',
          code: 'return 1',
          restartSafe: false,
          awaitResults: false,
          limits: SPEC_DEFAULT_LIMITS,
        });
      for (const { kind, write } of KINDS) {
        const runId = `cm_${randomUUID()}`;
        await request(runId);
        await runs.start(ref, runId, { workerId: 'bench', epoch: 1, replyTo: '' });
        const before = await fcallStats(redis);
        for (let n = 1; n <= perRound; n += 1) await write(log, ref, runId, n);
        const after = await fcallStats(redis);
        keep(kind, (after.usec - before.usec) / (after.calls - before.calls));
      }
      const before = await fcallStats(redis);
      for (let n = 1; n <= perRound; n += 1) {
        const runId = `cm_${randomUUID()}`;
        await request(runId);
        await runs.finish(ref, runId, { epoch: 1, type: 'run.completed', result: EXEC_RESULT, claimedBy: 'bench' });
      }
      keep(EXEC_KIND, ((await fcallStats(redis)).usec - before.usec) / perRound);
    }
  }
  return [...samples].map(([key, values]) => {
    const [build, kind] = key.split('\n');
    return { build, kind, p10Us: percentile(values, 10), p50Us: percentile(values, 50) };
  });
}

export function appendCostTable(costs: AppendCost[], rounds: number): string {
  return [
    `| Redis time per append call (the exec's row: per exec), warm (\`fcall\` µs; ${rounds} rounds) | build | p10 | p50 |`,
    '|---|---|---|---|',
    ...costs.map((c) => `| ${c.kind} | ${c.build} | ${fmt(c.p10Us, 1)} | ${fmt(c.p50Us, 1)} |`),
  ].join('\n');
}

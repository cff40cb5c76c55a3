import type { LiveRunCounts, RunStatus, RunSummary, SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { readNewestFirst } from '../log/newest-first-page';
import { runSummaryFromHash } from '../log/projections/views';
import { execMulti, guard } from '../platform/redis';
import { keptRecordFields, pastField } from './run-record';

/**
 * How many of a session's newest runs are looked at for its live ones. Live runs are the newest
 * almost always (a run lives at most a few parks); a bound keeps a listing's cost flat for
 * sessions with long histories: a page of 100 sessions reads at most 2,000 run statuses.
 */
export const LIVE_RUN_SCAN = 20;

const LIVE: ReadonlySet<RunStatus> = new Set<RunStatus>(['requested', 'running', 'waiting']);

/** Read side of a session's runs for the operator views: pages of run summaries (no results) and live counts. */
export class RunListing {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    /** How long a finished run is kept after its end (RETENTION_MS): a folded run's record says when it ended. */
    private readonly retentionMs: number,
  ) {}

  /** A page of the session's runs, newest request first; runs whose hash expired are left out. */
  async page(ref: SessionRef, limit: number, cursor?: string): Promise<{ runs: RunSummary[]; next: string | null }> {
    const page = await readNewestFirst(this.redis, this.keys.runs(ref), limit, cursor);
    const runs = await this.read(
      ref,
      page.entries.map((e) => e.member),
    );
    return { runs, next: page.next };
  }

  /** The live runs among each session's LIVE_RUN_SCAN newest, in two batched round trips. */
  async liveRuns(refs: readonly SessionRef[]): Promise<RunSummary[][]> {
    if (refs.length === 0) return [];
    // Per session, not one pipeline: sessions live in different Cluster slots (auto-pipelining
    // still batches the commands per node).
    const ids = await guard(() => Promise.all(refs.map((ref) => this.redis.zrevrange(this.keys.runs(ref), 0, LIVE_RUN_SCAN - 1))));
    const statuses = (
      await Promise.all(
        refs.map((ref, i) =>
          ids[i].length === 0
            ? Promise.resolve([])
            : execMulti(ids[i].reduce((m, id) => m.hget(this.keys.run(ref, id), 'status'), this.redis.pipeline())),
        ),
      )
    ).flat() as Array<string | null>;
    let at = 0;
    const liveIds = ids.map((list) => list.filter(() => LIVE.has(statuses[at++] as RunStatus)));
    return Promise.all(refs.map((ref, i) => this.read(ref, liveIds[i])));
  }

  /** Counts of `liveRuns`: requested or running, and parked (waiting). */
  static countLive(runs: readonly RunSummary[]): LiveRunCounts {
    return {
      running: runs.filter((r) => r.status === 'requested' || r.status === 'running').length,
      parked: runs.filter((r) => r.status === 'waiting').length,
    };
  }

  private async read(ref: SessionRef, runIds: readonly string[]): Promise<RunSummary[]> {
    if (runIds.length === 0) return [];
    const past = this.keys.pastRuns(ref);
    const replies = await execMulti(
      runIds.reduce((m, id) => m.hgetall(this.keys.run(ref, id)).hget(past, pastField(id)), this.redis.pipeline()),
    );
    const now = Date.now();
    const runs: RunSummary[] = [];
    runIds.forEach((runId, i) => {
      const stored = replies[2 * i] as Record<string, string>;
      // A finished run folded into its record (lua/includes/run-record.lua): its hash's fields as they were.
      const hash = Object.keys(stored).length > 0 ? stored : keptRecordFields(replies[2 * i + 1] as string | null, this.retentionMs, now);
      if (!hash) return;
      const run = runSummaryFromHash(ref, runId, hash);
      if (run) runs.push(run);
    });
    return runs;
  }
}

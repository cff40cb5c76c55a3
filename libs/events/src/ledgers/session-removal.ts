import type { SessionRef } from '@codemode/contracts';
import type { RedisClient } from '../platform/redis';
import type { KeySpace } from '../platform/keys';
import { guard } from '../platform/redis';
import { ScriptLoader } from '../platform/script-loader';
import { SessionIndex } from '../log/session-index';
import { StoredBytesLedger } from './stored-bytes-ledger';

/**
 * Removes a session's keys (`DELETE /v1/sessions/{sid}`, SPEC §10): everything in its slot in one
 * script (`delete-session.lua`), then what its tenant's slot knows of it (stored bytes, the
 * sessions index, the approvals listing), each its own command, so no command spans slots. The
 * caller ends the session's live runs first.
 */
export class SessionRemoval {
  private readonly stored: StoredBytesLedger;
  private readonly index: SessionIndex;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly scripts: ScriptLoader = ScriptLoader.default(),
  ) {
    this.stored = new StoredBytesLedger(redis, keys, scripts);
    this.index = new SessionIndex(redis, keys, scripts);
  }

  /** Whether the session exists (its session hash). */
  async exists(ref: SessionRef): Promise<boolean> {
    return (await guard(() => this.redis.exists(this.keys.session(ref)))) === 1;
  }

  /** The session's runs that have not ended (requested, running or parked), oldest first. */
  async liveRunIds(ref: SessionRef): Promise<string[]> {
    const runIds = await guard(() => this.redis.zrange(this.keys.runs(ref), '0', '-1'));
    if (runIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const runId of runIds) pipeline.hget(this.keys.run(ref, runId), 'status');
    const statuses = (await guard(() => pipeline.exec())) ?? [];
    return runIds.filter((_, i) => {
      const status = statuses[i]?.[1];
      return status === 'requested' || status === 'running' || status === 'waiting';
    });
  }

  /** Deletes the session; answers whether it existed. */
  async remove(ref: SessionRef): Promise<boolean> {
    const keys = [
      this.keys.events(ref),
      this.keys.session(ref),
      this.keys.transcript(ref),
      this.keys.runs(ref),
      this.keys.store(ref),
      this.keys.clientTools(ref),
      this.keys.sessionPolicy(ref),
      this.keys.approvals(ref),
      this.keys.resultsIndex(ref),
      this.keys.resultsSizes(ref),
      this.keys.storedLog(ref),
      this.keys.storedMinutes(ref),
      this.keys.sessionSkills(ref),
      this.keys.sessionSkillDocs(ref),
      this.keys.mcpTasks(ref),
      this.keys.mcpTaskWaits(ref),
    ];
    const [existed] = (await guard(() => this.scripts.run(this.redis, 'delete-session', keys, []))) as [number, number];
    await Promise.all([
      this.stored.forget(ref),
      this.index.forget(ref.tenant, [ref.sessionId]),
      guard(() => this.redis.srem(this.keys.tenantApprovalSessions(ref.tenant), ref.sessionId)),
    ]);
    return existed === 1;
  }
}

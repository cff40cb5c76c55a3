import { Inject, Injectable } from '@nestjs/common';
import { MCP_TASK_MIN_TTL_MS, type SessionRef } from '@codemode/contracts';
import { effectiveLimits, LIMIT_RULES, type AppConfig } from '@codemode/config';
import { SessionLedger } from '@codemode/events';
import { APP_CONFIG } from '../core/tokens';

/** How long a task lives and how long `tasks/result` may hold its request, for one session. */
export interface McpTaskTerms {
  /** The task's ttl: as asked, at most (and by default) the session's `snapshotTtlSeconds`, at least 60 s. */
  ttlMs: number;
  /** The longest a run can live: a working task is kept that long (it never expires before its run ends). */
  liveMs: number;
  /** The longest one call of the session can take to answer: `tasks/result` waits no longer. */
  answerMs: number;
}

/** SPEC §14 Tasks: a task's lifetimes, from the session's settings as an exec would run under them. */
@Injectable()
export class McpTaskTermsReader {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sessions: SessionLedger,
  ) {}

  async of(ref: SessionRef, askedTtlMs?: number | null): Promise<McpTaskTerms> {
    const { settings } = await this.sessions.settings(ref);
    const limits = effectiveLimits(this.config, ref.tenant, settings?.codeMode);
    const maxTtlMs = Math.max(MCP_TASK_MIN_TTL_MS, limits.snapshotTtlSeconds * 1000);
    const ttlMs = Math.min(maxTtlMs, Math.max(MCP_TASK_MIN_TTL_MS, askedTtlMs ?? maxTtlMs));
    const liveMs = (this.config.history.retentionSeconds + LIMIT_RULES.snapshotTtlSeconds.max) * 1000;
    const answerMs = Math.max(limits.timeoutMs, limits.snapshotTtlSeconds * 1000) + this.config.replyGraceMs;
    return { ttlMs, liveMs, answerMs };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { SessionDeleted, SessionRef } from '@codemode/contracts';
import { KeySpace, publishWorkspaceRemoval, SessionRemoval } from '@codemode/events';
import type { RedisClient } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { ConflictApiException, NotFoundApiException } from '../http/api-errors';
import { LOGGER, REDIS } from '../core/tokens';
import { AbortService } from '../runs/abort.service';

/**
 * `DELETE /v1/sessions/{sid}` (SPEC §10): the session's live runs are aborted first, through the
 * one abort path (`AbortService`, as `DELETE …/runs/{runId}` would), then every key of the session
 * goes, and what its tenant's slot knows of it (stored bytes, sessions index); then every worker is
 * told to remove the session's workspace (WorkspaceRemovals). A session of another
 * tenant is not found: the ref carries the caller's own tenant.
 */
@Injectable()
export class SessionDeletion {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly aborts: AbortService,
    private readonly removal: SessionRemoval,
  ) {}

  async delete(ref: SessionRef): Promise<SessionDeleted> {
    if (!(await this.removal.exists(ref))) throw new NotFoundApiException(`session ${ref.sessionId} not found.`);
    const live = await this.removal.liveRunIds(ref);
    for (const runId of live) await this.abort(ref, runId);
    await this.removal.remove(ref);
    await this.removeWorkspaces(ref);
    this.logger.info({ tenant: ref.tenant, sessionId: ref.sessionId, abortedRuns: live.length }, 'session deleted');
    return { sessionId: ref.sessionId, deleted: true, abortedRuns: live };
  }

  /**
   * Tells every worker to remove the session's workspace. The keys are already gone, so a message
   * that cannot be sent fails nothing: each worker's workspace sweep removes the folder instead.
   */
  private async removeWorkspaces(ref: SessionRef): Promise<void> {
    try {
      await publishWorkspaceRemoval(this.redis, this.keys, ref);
    } catch (error) {
      this.logger.warn(
        { tenant: ref.tenant, sessionId: ref.sessionId, err: error },
        'could not announce a workspace removal; the sweep removes it',
      );
    }
  }

  /** A run that ended meanwhile (409) or vanished (404) needs no abort; anything else stops the delete. */
  private async abort(ref: SessionRef, runId: string): Promise<void> {
    try {
      await this.aborts.abort(ref, runId);
    } catch (error) {
      if (error instanceof ConflictApiException && (error.getResponse() as { details?: { status?: string } }).details?.status !== 'running')
        return;
      if (error instanceof NotFoundApiException) return;
      throw error;
    }
  }
}

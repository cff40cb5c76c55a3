import { Injectable } from '@nestjs/common';
import type { ListPageQuery, RunList, SessionList, SessionRef, SessionSummary } from '@codemode/contracts';
import { RunListing, SessionIndex, SessionLedger } from '@codemode/events';
import { NotFoundApiException } from '../http/api-errors';

/** The operator listings: a tenant's sessions by last activity, a session's runs newest first. */
@Injectable()
export class SessionListing {
  constructor(
    private readonly index: SessionIndex,
    private readonly sessions: SessionLedger,
    private readonly runs: RunListing,
  ) {}

  /** Only the caller's tenant's index is read: another tenant's sessions are never looked at. */
  async sessionsOf(tenant: string, query: ListPageQuery): Promise<SessionList> {
    const page = await this.index.page(tenant, query.limit, query.cursor);
    const refs = page.sessionIds.map((sessionId) => ({ tenant, sessionId }));
    const [records, live] = await Promise.all([Promise.all(refs.map((ref) => this.sessions.get(ref))), this.runs.liveRuns(refs)]);
    const sessions: SessionSummary[] = [];
    const gone: string[] = [];
    refs.forEach((ref, i) => {
      const record = records[i];
      if (record === null) {
        gone.push(ref.sessionId);
        return;
      }
      sessions.push({
        sessionId: ref.sessionId,
        agentId: record.agentId,
        createdAt: record.createdAt,
        updatedAt: record.updatedAt,
        runs: RunListing.countLive(live[i]),
      });
    });
    await this.index.forget(tenant, gone);
    return { sessions, next: page.next };
  }

  async runsOf(ref: SessionRef, query: ListPageQuery): Promise<RunList> {
    const [session, page] = await Promise.all([this.sessions.get(ref), this.runs.page(ref, query.limit, query.cursor)]);
    if (session === null) throw new NotFoundApiException(`session ${ref.sessionId} not found.`);
    return { runs: page.runs, next: page.next };
  }
}

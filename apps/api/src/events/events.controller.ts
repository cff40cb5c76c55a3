import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { EventPage, SessionRef } from '@codemode/contracts';
import { EventLog } from '@codemode/events';
import { InvalidInputException, NotFoundApiException } from '../http/api-errors';
import { closeSignalOf } from '../http/connection-close';
import { Session } from '../http/request-params';
import type { ApiRequest } from '../http/request-context';
import { TenantLimitException } from '../quotas/tenant-limit.exception';
import { retryAfter } from '../quotas/tenant-rate.guard';
import { EventStreams } from './event-stream.service';

const STREAM_ID = /^\d{1,20}-\d{1,20}$/;
/** Stream id parts are unsigned 64-bit; the largest one has no id after it. */
const MAX_ID_PART = 2n ** 64n - 1n;

@Controller('v1/sessions/:sid/events')
export class EventsController {
  constructor(
    private readonly events: EventLog,
    private readonly streams: EventStreams,
  ) {}

  /** A page of the session's events, or with `Accept: text/event-stream` a live stream (SSE). */
  @Get()
  async list(
    @Session() ref: SessionRef,
    @Query('after') after: unknown,
    @Query('limit') limit: unknown,
    @Req() req: ApiRequest,
    @Res() res: ServerResponse,
  ): Promise<void> {
    const lastEventId = req.headers['last-event-id'];
    const cursor = parseAfter(after ?? (typeof lastEventId === 'string' ? lastEventId : undefined));
    const pageSize = parseLimit(limit);
    if (!(await this.events.exists(ref))) throw new NotFoundApiException(`session ${ref.sessionId} not found.`);
    if ((req.headers.accept ?? '').includes('text/event-stream')) {
      await this.stream(ref, cursor, res, closeSignalOf(req, res));
      return;
    }
    const page: EventPage = await this.events.read(ref, { after: cursor, limit: pageSize });
    res.statusCode = 200;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(page));
  }

  private async stream(ref: SessionRef, after: string | undefined, res: ServerResponse, closed: AbortSignal): Promise<void> {
    try {
      await this.streams.serve(ref, after, res, closed);
    } catch (error) {
      if (error instanceof TenantLimitException) retryAfter(res, error);
      throw error;
    }
  }
}

function parseAfter(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !STREAM_ID.test(value) || !value.split('-').every((part) => BigInt(part) < MAX_ID_PART)) {
    throw new InvalidInputException('after must be an event id from a previous page, such as 1700000000000-0.', { field: 'after' });
  }
  return value;
}

function parseLimit(value: unknown): number {
  if (value === undefined || value === '') return 100;
  const n = typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidInputException('limit must be an integer from 1 to 1000.', { field: 'limit' });
  }
  // SPEC §2: at most 1000 — a larger page is served as the largest one.
  return Math.min(n, 1000);
}

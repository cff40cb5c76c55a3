import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { EventPage, SessionRef } from '@codemode/contracts';
import { EventLog } from '@codemode/events';
import { InvalidInputException, NotFoundApiException } from '../core/api-errors';
import { Session } from '../core/request-params';
import type { ApiRequest } from '../core/request-context';
import { TenantLimitException } from '../quotas/tenant-limit.exception';
import { TenantLimits } from '../quotas/tenant-limits.service';
import { retryAfter } from '../quotas/tenant-rate.guard';

const STREAM_ID = /^\d{1,20}-\d{1,20}$/;
/** Stream id parts are unsigned 64-bit; the largest one has no id after it. */
const MAX_ID_PART = 2n ** 64n - 1n;
const HEARTBEAT_MS = 15_000;

@Controller('v1/sessions/:sid/events')
export class EventsController {
  constructor(
    private readonly log: EventLog,
    private readonly limits: TenantLimits,
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
    if (!(await this.log.exists(ref))) throw new NotFoundApiException(`session ${ref.sessionId} not found.`);
    if ((req.headers.accept ?? '').includes('text/event-stream')) {
      await this.stream(ref, cursor, req, res);
      return;
    }
    const page: EventPage = await this.log.read(ref, { after: cursor, limit: pageSize });
    res.statusCode = 200;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(page));
  }

  private async stream(ref: SessionRef, after: string | undefined, req: ApiRequest, res: ServerResponse): Promise<void> {
    // SPEC §10: each open stream holds one of its tenant's stream slots (and a Redis connection).
    let slot;
    try {
      slot = await this.limits.stream(ref.tenant);
    } catch (error) {
      if (error instanceof TenantLimitException) retryAfter(res, error);
      throw error;
    }
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(': streaming session events\n\n');
    const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
    try {
      // Without a cursor the stream replays the session from its first event, then goes live.
      for await (const event of this.log.follow(ref, after ?? '0-0', controller.signal)) {
        res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      }
    } finally {
      clearInterval(heartbeat);
      res.end();
      await slot.release().catch(() => undefined);
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

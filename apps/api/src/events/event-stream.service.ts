import { Inject, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { AppConfig } from '@codemode/config';
import type { Event, SessionRef } from '@codemode/contracts';
import { EventLog } from '@codemode/events';
import type { Logger } from '@codemode/telemetry';
import { APP_CONFIG, LOGGER } from '../core/tokens';
import { TenantLimits } from '../quotas/tenant-limits.service';
import { socketDrain } from './socket-drain';

const HEARTBEAT_MS = 15_000;

/**
 * Streams a session's events over SSE (SPEC §2), replaying from `after` and then live. It holds
 * one of its tenant's stream slots while open (SPEC §10) and is bounded in memory: the log is read
 * a page at a time and nothing more is read while the socket is not writable, and a consumer
 * whose socket has not drained for `maxLagMs` is disconnected, to resume with `Last-Event-ID`.
 */
@Injectable()
export class EventStreams {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly events: EventLog,
    private readonly limits: TenantLimits,
  ) {}

  /**
   * Serves the stream until the client goes (`closed`, watched from the request's first byte: a
   * client gone before its slot was taken gives it back at once), the consumer lags, or the log
   * fails; throws TenantLimitException past the quota.
   */
  async serve(ref: SessionRef, after: string | undefined, res: ServerResponse, closed: AbortSignal): Promise<void> {
    const slot = await this.limits.stream(ref.tenant);
    if (closed.aborted) {
      await slot.release().catch(() => undefined);
      return;
    }
    const { pageBytes, maxLagMs } = this.config.eventStreams;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(': streaming session events\n\n');
    // A ping waits behind a socket that is not drained: it would only add to what is held.
    const heartbeat = setInterval(() => res.writableNeedDrain || res.write(': ping\n\n'), HEARTBEAT_MS);
    try {
      // Without a cursor the stream replays the session from its first event, then goes live.
      for await (const event of this.events.follow(ref, after ?? '0-0', closed, pageBytes)) {
        res.write(frame(event));
        const outcome = await socketDrain(res, maxLagMs);
        if (outcome === 'closed') return;
        if (outcome === 'lagged') {
          this.logger.info(
            { tenant: ref.tenant, sessionId: ref.sessionId, lastEventId: event.id, maxLagMs },
            'event stream consumer lagged; disconnected',
          );
          res.destroy();
          return;
        }
      }
    } finally {
      clearInterval(heartbeat);
      res.end();
      await slot.release().catch(() => undefined);
    }
  }
}

function frame(event: Event): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

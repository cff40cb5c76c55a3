import type { ServerResponse } from 'node:http';
import { SESSION_ID_PATTERN } from '@codemode/contracts';
import { UNMATCHED_ROUTE, type Logger } from '@codemode/telemetry';
import type { ApiRequest } from './request-context';

/**
 * SPEC §19: one line per request, written when its answer is sent (or its connection goes first):
 * method, route template, status, duration, tenant, session and request id. Never the path itself,
 * a header value, a key or a body: the route template keeps ids and secrets out, and every field
 * is named here rather than copied from the request.
 */
export function accessLog(logger: Logger) {
  return (req: ApiRequest, res: ServerResponse, next: () => void): void => {
    const startedAt = process.hrtime.bigint();
    let written = false;
    const write = (): void => {
      if (written) return;
      written = true;
      const sid = req.params?.sid;
      logger.info(
        {
          requestId: req.requestId,
          method: req.method,
          route: req.route?.path ?? UNMATCHED_ROUTE,
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - startedAt) / 1e6,
          ...(req.tenant === undefined ? {} : { tenant: req.tenant }),
          // Only a well-formed id: the path segment is the caller's, of any size or content.
          ...(sid !== undefined && SESSION_ID_PATTERN.test(sid) ? { sessionId: sid } : {}),
          // The connection went before the answer was sent whole.
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        'request',
      );
    };
    res.once('finish', write);
    res.once('close', write);
    next();
  };
}

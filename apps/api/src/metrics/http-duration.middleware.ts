import type { ServerResponse } from 'node:http';
import { UNMATCHED_ROUTE, type ApiMetrics } from '@codemode/telemetry';
import type { ApiRequest } from '../http/request-context';

/**
 * Times every request, guard rejections and 404s included (an interceptor would miss both). The
 * route label is the matched route's template (`/v1/sessions/:sid/exec`), read when the
 * response ends because the router sets it only after this middleware ran; raw paths would put
 * session and run ids into labels.
 */
export function httpDuration(metrics: ApiMetrics) {
  return (req: ApiRequest, res: ServerResponse, next: () => void): void => {
    const end = metrics.httpRequestDuration.startTimer();
    res.once('finish', () => {
      end({ method: req.method ?? 'UNKNOWN', route: req.route?.path ?? UNMATCHED_ROUTE, status: String(res.statusCode) });
    });
    next();
  };
}

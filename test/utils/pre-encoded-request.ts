import { request } from 'node:http';

export interface PreEncodedAnswer {
  status: number;
  /** The answer's text, when it was at most `keepBytes` long; else '' (drained, never kept). */
  text: string;
}

/**
 * An attacker's request sent from bytes encoded once beforehand, its answer drained past
 * `keepBytes`: the victim's probe runs in this process too, and must measure the API, not this
 * process encoding or parsing ~11 MB bodies (together ~0.8-1.8 s of its event loop, which the
 * probe counted as the API's latency).
 */
export function sendPreEncoded(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body: Uint8Array | null,
  headers: Record<string, string> = {},
  keepBytes = 64 * 1024,
): Promise<PreEncodedAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === null ? {} : { 'content-type': 'application/json', 'content-length': body.byteLength }),
        ...headers,
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= keepBytes) chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: size <= keepBytes ? Buffer.concat(chunks).toString('utf8') : '' }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

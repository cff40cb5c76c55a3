import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

/** A webhook's HTTP answer; `text` is undefined when the body was over the read limit. */
export interface WebhookAnswer {
  readonly status: number;
  readonly text: string | undefined;
}

export interface WebhookPost {
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: string;
  /** Where the socket may connect (see pinnedLookup). */
  readonly lookup: LookupFunction;
  readonly signal: AbortSignal;
  /** Largest body read; past it the connection is dropped. */
  readonly limit: number;
}

class ConnectionResetError extends Error {
  readonly code = 'ECONNRESET';
  constructor() {
    super('the connection closed before the answer was complete');
    this.name = 'ConnectionResetError';
  }
}

/**
 * POSTs `payload` to `url` over node:http(s) on a connection of its own, dialed through `lookup`,
 * and reads the answer up to `limit` bytes. node:http never follows redirects: a 3xx comes back
 * as it is. Rejects with the socket's error (its `code`, e.g. ECONNREFUSED) or an AbortError.
 */
export function postBounded(url: URL, post: WebhookPost): Promise<WebhookAnswer> {
  return new Promise<WebhookAnswer>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      url,
      {
        method: 'POST',
        headers: { ...post.headers, 'content-length': String(Buffer.byteLength(post.payload)) },
        lookup: post.lookup,
        agent: false,
        signal: post.signal,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let total = 0;
        response.on('data', (chunk: Buffer) => {
          total += chunk.byteLength;
          if (total > post.limit) {
            resolve({ status, text: undefined });
            request.destroy();
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => resolve({ status, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
        response.on('close', () => {
          if (!response.complete) reject(new ConnectionResetError());
        });
      },
    );
    request.on('error', reject);
    request.end(post.payload);
  });
}

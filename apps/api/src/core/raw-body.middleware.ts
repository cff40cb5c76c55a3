import type { ServerResponse } from 'node:http';
import { MAX_BODY_BYTES, type ApiRequest, type ParsedBody } from './request-context';

/** Past this we stop draining an oversized body and drop the connection. */
const MAX_DRAIN_BYTES = 4 * MAX_BODY_BYTES;

/**
 * Reads every request body ourselves instead of Express's JSON parser: exec and wait must answer
 * a malformed or oversized body with a Code Mode result, not with the parser's 400/413, and the
 * content type a model's platform sends is not to be trusted.
 */
export function rawJsonBody(req: ApiRequest, _res: ServerResponse, next: (error?: unknown) => void): void {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
    req.parsedBody = { kind: 'empty' };
    next();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const finish = (body: ParsedBody): void => {
    if (done) return;
    done = true;
    req.parsedBody = body;
    next();
  };
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    else if (size > MAX_DRAIN_BYTES) req.destroy();
  });
  req.on('end', () => finish(parse(chunks, size)));
  req.on('error', () => finish({ kind: 'invalid_json' }));
  req.on('close', () => {
    if (size > MAX_DRAIN_BYTES) finish({ kind: 'too_large' });
  });
}

function parse(chunks: Buffer[], size: number): ParsedBody {
  if (size > MAX_BODY_BYTES) return { kind: 'too_large' };
  if (size === 0) return { kind: 'empty' };
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { kind: 'empty' };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'invalid_json' };
  }
}

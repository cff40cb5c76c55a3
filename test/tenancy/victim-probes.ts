import { request } from 'node:http';
import type { CodeModeClient } from '@codemode/client';

/**
 * What the fate-isolation suites measure while one tenant attacks: the victim's read latency, the
 * API's event-loop lag, and attacker requests sent from bytes encoded once beforehand (so this
 * process's own work never counts as the API's latency).
 */

/** The largest event-loop delay since the last scrape (prom-client resets its histogram on each). */
export async function lagMaxMs(metricsUrl: string): Promise<number> {
  const text = await fetch(metricsUrl).then((r) => r.text());
  const match = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text);
  if (!match) throw new Error(`no nodejs_eventloop_lag_max_seconds at ${metricsUrl}`);
  return Number(match[1]) * 1000;
}

/** Reads the victim's session every 25 ms until `until` settles; each read's latency in ms. */
export async function probeWhile(victim: CodeModeClient, sessionId: string, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const started = performance.now();
    const answer = await victim.raw('GET', `/v1/sessions/${sessionId}`);
    latencies.push(performance.now() - started);
    expect(answer.status).toBe(200);
    await new Promise((r) => setTimeout(r, 25));
  }
  return latencies;
}

export const p99 = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))];
export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
export const round = (n: number): number => Math.round(n * 10) / 10;

export interface AttackAnswer {
  status: number;
  /** The answer's text, when it was at most `keepBytes` long; else '' (drained, never kept). */
  text: string;
}

/** One request with a body encoded beforehand; answers over `keepBytes` are drained, not kept. */
export function send(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body: Uint8Array | null,
  headers: Record<string, string> = {},
  keepBytes = 64 * 1024,
): Promise<AttackAnswer> {
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

/** About `megabytes` MB of client tools named `<prefix><i>`, each ~65 KB (an 8000-character description, a ~55 KB schema). */
export function toolsOfMegabytes(
  megabytes: number,
  prefix: string,
): { name: string; description: string; inputSchema: Record<string, unknown> }[] {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 1000; i += 1) properties[`p${i}`] = { type: 'string', description: 'x'.repeat(20) };
  return Array.from({ length: Math.round((megabytes * 1e6) / 65_000) }, (_, i) => ({
    name: `${prefix}${i}`,
    description: 'd'.repeat(8000),
    inputSchema: { type: 'object', properties },
  }));
}

import { randomBytes, randomUUID } from 'node:crypto';
import type { CodeModeResult, Limits } from '@codemode/contracts';
import type { Redis } from 'ioredis';
import { createRedis, waitUntilReady } from './redis';
import type { RunRequestedData } from './run-ledger';

/** Test-only helpers for the *.int-spec.ts files of this library. */
export const TEST_REDIS_URL = 'redis://127.0.0.1:6379';

/** A key prefix no other test file (or agent) shares. */
export function testPrefix(name: string): string {
  return `t-events-${name}-${randomBytes(4).toString('hex')}`;
}

export async function testRedis(name: string): Promise<Redis> {
  const redis = createRedis(TEST_REDIS_URL, { name });
  await waitUntilReady(redis);
  return redis;
}

/** Deletes every key under `prefix` (never FLUSH: the Redis is shared). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

export const newRunId = (): string => `cm_${randomUUID()}`;

export const LIMITS: Limits = {
  timeoutMs: 10000,
  memoryLimitBytes: 67108864,
  maxOutputBytes: 65536,
  maxSnapshotBytes: 10485760,
  maxPendingToolCalls: 16,
  snapshotTtlSeconds: 900,
  searchDefaultLimit: 8,
  maxSearchLimit: 50,
  resultsTtlSeconds: 3600,
};

export function requestData(title = 'sum', code = 'return 1 + 1'): RunRequestedData {
  return { title, code, restartSafe: false, awaitResults: false, limits: LIMITS };
}

const TELEMETRY = {
  catalogSize: 0,
  sources: { openclaw: 0, mcp: 0, client: 0 },
  searchCount: 0,
  describeCount: 0,
  callCount: 0,
  counterScope: 'run',
  visibleTools: ['exec', 'wait'] as ['exec', 'wait'],
};

export function completed(value: unknown): CodeModeResult {
  return { status: 'completed', value, replaySafe: false, telemetry: TELEMETRY };
}

export function failed(error: string, code: 'runtime_unavailable' | 'invalid_input' | 'aborted' = 'runtime_unavailable'): CodeModeResult {
  return { status: 'failed', error, code, failurePhase: 'host', bridgeDispatchStarted: false, replaySafe: false, telemetry: TELEMETRY };
}

export function waiting(runId: string): CodeModeResult {
  return { status: 'waiting', runId, reason: 'yield', replaySafe: false, telemetry: TELEMETRY };
}

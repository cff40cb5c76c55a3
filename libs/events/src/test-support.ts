import { randomUUID } from 'node:crypto';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { testPrefix as sharedTestPrefix } from '../../../test/utils/redis-test-keys';
import type { Redis } from 'ioredis';
import type { CodeModeResult, EventType, Limits, SessionRef, WaitingResult } from '@codemode/contracts';
import type { AppendInput } from './log/event-log';
import type { RunRequestedData } from './runs/run-ledger';
import type { KeySpace } from './platform/keys';
import { ScriptLoader } from './platform/script-loader';
import { pastField, recordFields } from './runs/run-record';

/** Test-only helpers for the *.int-spec.ts files of this library. */
export { deleteKeys, TEST_REDIS_URL, testRedis } from '../../../test/utils/redis-test-keys';

export const testPrefix = (name: string): string => sharedTestPrefix('events', name);

export const newRunId = (): string => `cm_${randomUUID()}`;

export const LIMITS: Limits = { ...SPEC_DEFAULT_LIMITS };

/**
 * An append whose data no writer of this build writes, for specs of the log's own mechanics
 * (paging, fencing, counters, refused types): its data is not checked against its type's.
 */
export function untypedAppend(input: Omit<AppendInput, 'type' | 'data'> & { type: EventType; data: Record<string, unknown> }): AppendInput {
  return input as AppendInput;
}

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

export function waiting(runId: string): WaitingResult {
  return { status: 'waiting', runId, reason: 'yield', replaySafe: false, telemetry: TELEMETRY };
}

/** A run's hash as Redis holds it or, once the run is folded, the fields its record keeps of it (lua/includes/run-record.lua). */
export async function storedRun(redis: Redis, keys: KeySpace, ref: SessionRef, runId: string): Promise<Record<string, string>> {
  const hash = await redis.hgetall(keys.run(ref, runId));
  if (Object.keys(hash).length > 0) return hash;
  const record = await redis.hget(keys.pastRuns(ref), pastField(runId));
  return record === null ? {} : recordFields(record);
}

/** The session's log entries as stored (type codes, packed data), from its stream and its finished runs' records. */
export async function storedEntries(redis: Redis, keys: KeySpace, ref: SessionRef): Promise<[id: string, fields: string[]][]> {
  const pageKeys = keys.logReadKeys(ref);
  const reply = (await ScriptLoader.default().run(redis, 'read-events-page', pageKeys, ['0-0', 1000, Number.MAX_SAFE_INTEGER])) as [
    number,
    [string, string[]][],
  ];
  return reply[1];
}

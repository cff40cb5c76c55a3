import { randomUUID } from 'node:crypto';
import { SPEC_DEFAULT_LIMITS } from '@codemode/config';
import { testPrefix as sharedTestPrefix } from '../../../test/utils/redis-test-keys';
import type { Limits } from '@codemode/contracts';

/** Test-only helpers for the *.int-spec.ts files of this library. */
export { deleteKeys, TEST_REDIS_URL, testRedis } from '../../../test/utils/redis-test-keys';

export const testPrefix = (name: string): string => sharedTestPrefix('store', name);

export const newRunId = (): string => `cm_${randomUUID()}`;

export const LIMITS: Limits = { ...SPEC_DEFAULT_LIMITS };

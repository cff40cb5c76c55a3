import { testPrefix as sharedTestPrefix } from '../../../test/utils/redis-test-keys';

/** Test-only helpers for the *.int-spec.ts files of this library. */
export { deleteKeys, testRedis } from '../../../test/utils/redis-test-keys';

export const testPrefix = (name: string): string => sharedTestPrefix('fleet', name);

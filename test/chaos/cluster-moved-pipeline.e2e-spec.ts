import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createRedis, keySlot, StoreUnavailableError, toStoreError, type RedisClient } from '@codemode/events';
import { PrivateRedisCluster } from '../utils/private-redis-cluster';

jest.setTimeout(60_000);

const run = promisify(execFile);
const cli = async (port: number, ...args: string[]): Promise<string> =>
  (await run('redis-cli', ['-p', String(port), ...args])).stdout.trim();

/**
 * What the API's Redis client throws when a slot of the cluster moves under it (a failover moves
 * every slot of the failed primary): ioredis's auto-pipelining batches a node's commands together,
 * and a MOVED for one slot updates that slot only in its map until it has read the whole map
 * again; a batch of several slots sent meanwhile is refused with a plain Error
 * (redis/ioredis#2075): an HTTP 500 for every call with a command in the batch, until it
 * counted as "unavailable".
 */
describe('a slot moving under an auto-pipelined cluster client (SPEC §13 "Faults")', () => {
  let cluster: PrivateRedisCluster;
  let redis: RedisClient;

  beforeAll(async () => {
    cluster = await PrivateRedisCluster.start({ replicas: 0 });
    redis = createRedis({
      url: '',
      clusterNodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
      username: undefined,
      password: undefined,
    });
  });
  afterAll(async () => {
    redis?.disconnect();
    await cluster?.cleanup();
  });

  it('fails the batch behind the MOVED only with errors that mean "unavailable"', async () => {
    const [from, to] = await cluster.primaries();
    const onFrom = await cluster.slotsOf(from);
    const keys = Array.from({ length: 100 }, (_, i) => `k${i}`).filter((key) => onFrom(keySlot(key)));
    const moving = keys[0];
    const staying = keys.find((key) => keySlot(key) !== keySlot(moving))!;
    // The client has read the slot map; then one slot moves (as its primary's slots do in a failover).
    await Promise.all([redis.get(moving), redis.get(staying)]);
    const toId = await cli(to, 'cluster', 'myid');
    for (const port of cluster.ports) await cli(port, 'cluster', 'setslot', String(keySlot(moving)), 'node', toId);

    // A batch meets the MOVED; a batch of both slots queues behind it on the same node.
    const first = redis.get(moving);
    await new Promise((resolve) => setImmediate(resolve));
    const behind = [redis.get(moving), redis.get(staying)];
    const outcomes = await Promise.allSettled([first, ...behind]);

    const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as Error] : []));
    // The real error, from the real client: if an ioredis upgrade no longer throws it, its mapping may go.
    expect(failures.map((e) => e.message)).toContain('All keys in the pipeline should belong to the same slots allocation group');
    for (const failure of failures)
      expect([failure.message, toStoreError(failure)]).toEqual([failure.message, expect.any(StoreUnavailableError)]);
  });
});

import { Redis } from 'ioredis';
import { PrivateRedis } from '../test/utils/private-redis';
import { appendBuilds, appendCostTable, measureAppendCost } from './append-cost';

const ROUNDS = Number(process.env.BENCH_APPEND_ROUNDS ?? 30);

/**
 * `npm run bench:append`: Redis's own time per append call of the event log (issue 40), warm, on
 * a private Redis. `BENCH_APPEND_BASE=<another built checkout>` measures that checkout's build in
 * turns with this one: how a change to the append path's Lua is weighed, where a whole exec's
 * figures move by ±20 % between runs on this machine.
 */
async function main(): Promise<void> {
  const redis = await PrivateRedis.start();
  const node = new Redis(redis.url);
  try {
    const costs = await measureAppendCost(node, appendBuilds(process.env.BENCH_APPEND_BASE), ROUNDS);
    process.stdout.write(`${appendCostTable(costs, ROUNDS)}\n`);
  } finally {
    node.disconnect();
    await redis.cleanup();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});

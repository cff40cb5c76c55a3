import { TestStack } from '../test/utils/test-stack';
import { measureRedisCost, redisCostTable } from './redis-cost';

const EXECS = Number(process.env.BENCH_REDIS_COST_EXECS ?? 200);

/** `npm run bench:redis`: only the Redis-work-per-exec table of `npm run bench` (one api, one worker), printed. */
async function main(): Promise<void> {
  const stack = await TestStack.start({ workers: 1 });
  try {
    const client = stack.client();
    const execCell = async (): Promise<unknown> => {
      const result = await client.exec('bench', { title: 'add', code: 'return 1+1' });
      if (result.status !== 'completed' || result.value !== 2) throw new Error(`unexpected result ${JSON.stringify(result)}`);
      return result;
    };
    for (let i = 0; i < 50; i += 1) await execCell();
    process.stdout.write(`${redisCostTable(await measureRedisCost(EXECS, execCell))}\n`);
  } finally {
    await stack.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});

import { garbageTable, measureGarbage, profileFolder } from './garbage';

const EXECS = Number(process.env.BENCH_GARBAGE_EXECS ?? 2000);

/**
 * `npm run bench:garbage`: the garbage section of `npm run bench`, printed. With
 * `BENCH_GARBAGE_PROFILE=1` a second load samples each process's allocations and lists the top
 * allocators (`BENCH_GARBAGE_PROFILE=<folder>` keeps the .heapprofile files there).
 */
async function main(): Promise<void> {
  process.stdout.write(`${garbageTable(await measureGarbage(EXECS))}\n`);
  const keep = process.env.BENCH_GARBAGE_PROFILE;
  if (!keep) return;
  const folder = profileFolder(keep === '1' ? undefined : keep);
  try {
    process.stdout.write(`\nWith the sampling heap profiler on:\n\n${garbageTable(await measureGarbage(EXECS, folder.dir))}\n`);
  } finally {
    folder.cleanup();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});

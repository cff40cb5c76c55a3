import { measureScaleOut, scaleOutTable } from './scale-out';

const CALLS = Number(process.env.BENCH_SCALE_OUT_EXECS ?? 3000);

/** `npm run bench:scale`: only the scale-out table of `npm run bench` (SPEC §13), printed. */
async function main(): Promise<void> {
  process.stdout.write(`${scaleOutTable(await measureScaleOut(CALLS))}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});

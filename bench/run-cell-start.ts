import { cellStartTable, measureCellStart } from './cell-start';

/** `npm run bench:cell-start`: only the cell start section of `npm run bench`, printed. */
measureCellStart(Number(process.env.BENCH_CELL_START_SAMPLES ?? 300)).then(
  (report) => process.stdout.write(`${cellStartTable(report)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exit(1);
  },
);

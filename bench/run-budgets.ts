import { budgetsTable, measureBudgets } from './budgets';

/** `npm run bench:budgets`: only SPEC §17's published budgets of `npm run bench`, printed. */
measureBudgets(Number(process.env.BENCH_BUDGET_SAMPLES ?? 200)).then(
  (budgets) => process.stdout.write(`${budgetsTable(budgets)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exit(1);
  },
);

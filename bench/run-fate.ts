import { fateIsolationTable, measureFateIsolation } from './fate-isolation';

/** `npm run bench:fate`: only the fate-isolation table of `npm run bench` (SPEC §10), printed. */
measureFateIsolation().then(
  (rows) => process.stdout.write(`${fateIsolationTable(rows)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exit(1);
  },
);

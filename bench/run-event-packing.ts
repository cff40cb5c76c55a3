import { measurePacking, packingTable } from './event-packing';

/** `npm run bench:packing`: what packing a finished run's data costs the processes (SPEC §13). */
const samples = Number(process.env.BENCH_PACKING_SAMPLES ?? 5000);
process.stdout.write(`${packingTable(measurePacking(samples), samples)}\n`);

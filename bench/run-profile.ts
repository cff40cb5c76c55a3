import { measureProfile, profileTable } from './cpu-profile';

const EXECS = Number(process.env.BENCH_PROFILE_EXECS ?? 3000);
const IN_FLIGHT = 64;

/** `npm run bench:profile`: where a trivial exec's CPU goes, by process and function. */
measureProfile(EXECS, IN_FLIGHT).then(
  (profiles) => process.stdout.write(`${profileTable(profiles, EXECS, IN_FLIGHT)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exit(1);
  },
);

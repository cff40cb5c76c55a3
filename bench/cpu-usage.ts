import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux only; 0 elsewhere). */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After "pid (comm) ", utime and stime are fields 12 and 13 (0-based).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU ms each named process spends while `work` runs. */
export async function cpuDuring(pids: Record<string, number>, work: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processCpuMs(pid)]));
  await work();
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processCpuMs(pid) - before[name]]));
}

import { readFileSync } from 'node:fs';

/** A process's resident set in bytes (Linux `/proc/<pid>/status` VmRSS), or null once it is gone. */
export function residentBytes(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export interface RssGrowth {
  process: string;
  /** Mean RSS over the process's first and last windows of runs, in MiB. */
  firstMiB: number;
  lastMiB: number;
  growthMiB: number;
}

/**
 * RSS samples of the service's processes, taken as the soak's runs go by, and how much each
 * process grew from its first window of runs to its last (SPEC §17: "from the first to the last
 * thousand"). A process started midway (a restarted worker) is measured over its own life,
 * from its second window on (its first holds its boot).
 */
export class RssSampler {
  private readonly samples = new Map<string, Array<{ run: number; bytes: number }>>();

  sample(processes: ReadonlyArray<{ name: string; pid: number }>, run: number): void {
    for (const { name, pid } of processes) {
      const bytes = residentBytes(pid);
      if (bytes === null) continue;
      const list = this.samples.get(name) ?? [];
      list.push({ run, bytes });
      this.samples.set(name, list);
    }
  }

  growth(window: number): RssGrowth[] {
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;
    const soakStart = Math.min(...[...this.samples.values()].map((list) => list[0].run));
    return [...this.samples].flatMap(([name, list]) => {
      // A process started midway boots inside its first window (its RSS climbs from a bare
      // process as modules and sandbox threads load): that is not growth, so it is measured from
      // its second window on, once warm.
      const start = list[0].run > soakStart ? list[0].run + window : list[0].run;
      const end = list[list.length - 1].run;
      if (end - start < 2 * window) return [];
      const first = mean(list.filter((s) => s.run <= start + window).map((s) => s.bytes));
      const last = mean(list.filter((s) => s.run >= end - window).map((s) => s.bytes));
      return [{ process: name, firstMiB: mib(first), lastMiB: mib(last), growthMiB: mib(last - first) }];
    });
  }
}

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
  /** Mean RSS over the first window of runs (see `RssSampler`) and over the last, in MiB. */
  firstMiB: number;
  lastMiB: number;
  growthMiB: number;
}

/** A service process to sample: `kind` groups the processes that run the same code (`api`, `worker`). */
export interface SampledProcess {
  name: string;
  kind: string;
  pid: number;
}

/**
 * RSS samples of the service's processes, taken as the soak's runs go by, and how much each
 * process grew from its first window of runs to its last (SPEC §17: "from the first to the last
 * thousand").
 *
 * A process started midway (a restarted worker) boots from a bare process and then climbs, over
 * its first hundred runs or more, to the warm size its peers had from the start: measured from
 * its own first windows, that climb would read as growth (262 MiB once on a slow CI machine, with
 * the peers grown 56 and 110). So its first window is its peers': the mean first-window RSS of
 * the processes of its kind that ran from the start. A leak in it still shows, as its last
 * window rising above that warm size.
 */
export class RssSampler {
  private readonly samples = new Map<string, { kind: string; list: Array<{ run: number; bytes: number }> }>();

  sample(processes: ReadonlyArray<SampledProcess>, run: number): void {
    for (const { name, kind, pid } of processes) {
      const bytes = residentBytes(pid);
      if (bytes === null) continue;
      const entry = this.samples.get(name) ?? { kind, list: [] };
      entry.list.push({ run, bytes });
      this.samples.set(name, entry);
    }
  }

  growth(window: number): RssGrowth[] {
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;
    const entries = [...this.samples];
    const soakStart = Math.min(...entries.map(([, { list }]) => list[0].run));
    const firstWindow = new Map(
      entries
        .filter(([, { list }]) => list[0].run === soakStart)
        .map(([name, { list }]) => [name, mean(list.filter((s) => s.run <= soakStart + window).map((s) => s.bytes))]),
    );
    return entries.flatMap(([name, { kind, list }]) => {
      const end = list[list.length - 1].run;
      const last = mean(list.filter((s) => s.run >= end - window).map((s) => s.bytes));
      const own = firstWindow.get(name);
      const peers = entries.filter(([peer, e]) => e.kind === kind && firstWindow.has(peer)).map(([peer]) => firstWindow.get(peer)!);
      // Compared only when the last window is clear of the first (or, midway, of the boot).
      if (end - window <= list[0].run + window || (own === undefined && peers.length === 0)) return [];
      const first = own ?? mean(peers);
      return [{ process: name, firstMiB: mib(first), lastMiB: mib(last), growthMiB: mib(last - first) }];
    });
  }
}

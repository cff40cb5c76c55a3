import type { Readable } from 'node:stream';

/** What V8's collector reported for one isolate, summed over its `--trace-gc-nvp` lines. */
export interface IsolateGc {
  /** Main-thread time of the collections: the atomic pauses plus incremental marking steps, ms. */
  mainMs: number;
  /** Collector work on V8's helper threads (parallel scavenge, concurrent marking and sweeping…), ms. */
  backgroundMs: number;
  /** Bytes the isolate allocated, as V8 counts them at each collection (since the one before). */
  allocatedBytes: number;
  scavenges: number;
  markCompacts: number;
}

/** Every isolate of one process, keyed by its address, in the order they first collected. */
export type ProcessGc = Map<string, IsolateGc>;

const LINE = /^\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: (pause=.*)$/;

/**
 * Reads the `--trace-gc-nvp` lines a process prints on `stdout` (one per collection, each isolate
 * — the main thread's and every worker thread's — under its own address) and keeps running sums.
 * V8 flushes each line as it prints it, so a snapshot taken now counts every collection up to now.
 */
export class GcTrace {
  private readonly isolates: ProcessGc = new Map();
  /** When each isolate was created (its lines count ms from then), as seen from here. */
  private readonly bornAt = new Map<string, number>();
  private partial = '';

  constructor(stdout: Readable) {
    stdout.on('data', (chunk: Buffer) => {
      const lines = (this.partial + chunk.toString()).split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) this.read(line);
    });
  }

  /** A copy of the sums so far. */
  snapshot(): ProcessGc {
    return new Map([...this.isolates].map(([address, gc]) => [address, { ...gc }]));
  }

  /** The main thread's isolate: the first created (worker threads start theirs later). */
  mainIsolate(): string | undefined {
    return [...this.bornAt].sort((a, b) => a[1] - b[1])[0]?.[0];
  }

  private read(line: string): void {
    const match = LINE.exec(line);
    if (!match) return;
    const born = Date.now() - Number(match[2]);
    if (born < (this.bornAt.get(match[1]) ?? Infinity)) this.bornAt.set(match[1], born);
    const fields = new Map(match[3].split(' ').map((pair) => pair.split('=') as [string, string]));
    const number = (name: string): number => Number(fields.get(name) ?? 0) || 0;
    let backgroundMs = 0;
    for (const [name, value] of fields) if (name.startsWith('background.')) backgroundMs += Number(value) || 0;
    const gc = this.isolates.get(match[1]) ?? { mainMs: 0, backgroundMs: 0, allocatedBytes: 0, scavenges: 0, markCompacts: 0 };
    // A mark-compact line's `incremental` is the main-thread marking done before its pause.
    gc.mainMs += number('pause') + (fields.get('gc') === 'mc' ? number('incremental') : 0);
    gc.backgroundMs += backgroundMs;
    gc.allocatedBytes += number('allocated');
    if (fields.get('gc') === 's') gc.scavenges += 1;
    else gc.markCompacts += 1;
    this.isolates.set(match[1], gc);
  }
}

/** `after − before`, isolate by isolate (an isolate born in between counts from zero). */
export function gcBetween(before: ProcessGc, after: ProcessGc): ProcessGc {
  const zero: IsolateGc = { mainMs: 0, backgroundMs: 0, allocatedBytes: 0, scavenges: 0, markCompacts: 0 };
  return new Map(
    [...after].map(([address, a]) => {
      const b = before.get(address) ?? zero;
      return [
        address,
        {
          mainMs: a.mainMs - b.mainMs,
          backgroundMs: a.backgroundMs - b.backgroundMs,
          allocatedBytes: a.allocatedBytes - b.allocatedBytes,
          scavenges: a.scavenges - b.scavenges,
          markCompacts: a.markCompacts - b.markCompacts,
        },
      ];
    }),
  );
}

/** The sums of several isolates. */
export function gcTotal(isolates: IsolateGc[]): IsolateGc {
  return isolates.reduce(
    (sum, gc) => ({
      mainMs: sum.mainMs + gc.mainMs,
      backgroundMs: sum.backgroundMs + gc.backgroundMs,
      allocatedBytes: sum.allocatedBytes + gc.allocatedBytes,
      scavenges: sum.scavenges + gc.scavenges,
      markCompacts: sum.markCompacts + gc.markCompacts,
    }),
    { mainMs: 0, backgroundMs: 0, allocatedBytes: 0, scavenges: 0, markCompacts: 0 },
  );
}

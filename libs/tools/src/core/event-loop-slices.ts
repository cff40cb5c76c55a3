/**
 * Keeps the worker's event loop turning while core tools work through something large (SPEC §10
 * "Event loops": no tool call holds it for more than 50 ms): long loops call `pause()` often.
 * Slices are shared by every caller of one instance, and the worker's tools share one
 * (`SHARED_SLICES`): once SLICE_MS of work is done since the last yield, the caller queues, and each
 * turn of the event loop resumes one queued caller, round-robin. So eight tenants' reads at once
 * still cost the loop one slice per turn (timers, sockets and other tenants' cells run between),
 * not eight. An awaited promise that is already resolved does not yield, so loops over cached or
 * synchronous work need this even when they `await` inside.
 */

/** Work done between two yields, far under the 50 ms bound so a slow machine stays within it. */
const SLICE_MS = 8;

export class EventLoopSlices {
  private sliceStarted = performance.now();
  private readonly queued: Array<() => void> = [];

  /** Yields to the event loop when the current slice is used up, after the callers queued before. */
  async pause(): Promise<void> {
    if (performance.now() - this.sliceStarted < SLICE_MS) {
      return;
    }
    await new Promise<void>((resume) => {
      this.queued.push(resume);
      if (this.queued.length === 1) {
        setImmediate(() => this.resumeNext());
      }
    });
  }

  /** Starts a slice for the caller queued first; the next one waits for the next turn. */
  private resumeNext(): void {
    const next = this.queued.shift();
    this.sliceStarted = performance.now();
    if (this.queued.length > 0) {
      setImmediate(() => this.resumeNext());
    }
    next?.();
  }
}

/** The slices the worker's core tool calls share. */
export const SHARED_SLICES = new EventLoopSlices();

/** Merges two sorted runs of `from` into `to` in slices. */
async function mergeRuns<T>(
  from: T[],
  to: T[],
  bounds: { start: number; middle: number; end: number },
  compare: (a: T, b: T) => number,
  slices: EventLoopSlices,
): Promise<void> {
  let left = bounds.start;
  let right = bounds.middle;
  for (let out = bounds.start; out < bounds.end; out += 1) {
    if (right >= bounds.end || (left < bounds.middle && compare(from[left], from[right]) <= 0)) {
      to[out] = from[left];
      left += 1;
    } else {
      to[out] = from[right];
      right += 1;
    }
    if ((out & 0x3ff) === 0) {
      await slices.pause();
    }
  }
}

/** Runs of this many items are sorted natively in one go (well under a slice each). */
const NATIVE_RUN = 256;

/**
 * Sorts `items` in place, stable, like `Array.prototype.sort` with `compare`, in slices: sorting
 * the 100 000 names of one large directory takes hundreds of milliseconds.
 */
export async function sortInSlices<T>(items: T[], compare: (a: T, b: T) => number, slices: EventLoopSlices): Promise<T[]> {
  if (items.length <= NATIVE_RUN) {
    return items.sort(compare);
  }
  let from = items;
  for (let start = 0; start < items.length; start += NATIVE_RUN) {
    const run = items.slice(start, start + NATIVE_RUN).sort(compare);
    for (let offset = 0; offset < run.length; offset += 1) {
      items[start + offset] = run[offset];
    }
    await slices.pause();
  }
  let to = new Array<T>(items.length);
  for (let width = NATIVE_RUN; width < items.length; width *= 2) {
    for (let start = 0; start < items.length; start += 2 * width) {
      const middle = Math.min(start + width, items.length);
      const end = Math.min(start + 2 * width, items.length);
      await mergeRuns(from, to, { start, middle, end }, compare, slices);
    }
    [from, to] = [to, from];
  }
  if (from !== items) {
    for (let index = 0; index < items.length; index += 1) {
      items[index] = from[index];
    }
  }
  return items;
}

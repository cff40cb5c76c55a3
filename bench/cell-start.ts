import { CellStartProbe } from '@codemode/sandbox';
import { QuickjsBaseline } from './quickjs-baseline';
import { fmt, percentile } from './stats';

export interface CellStartReport {
  samples: number;
  imageKiB: number;
  image: { p50: number; p99: number };
  /** The image start plus the zero-fill of its Memory the loader leaves for the next turn: the cell's whole CPU. */
  imageWithFill: { p50: number; p99: number };
  scratch: { p50: number; p99: number };
  bare: { p50: number; p99: number };
}

/**
 * Per cell, in-process, one tiny cell each: a VM started from the thread's prepared image vs one
 * built from scratch (instance + runtime + codec/console/prelude compiled) vs a bare QuickJS
 * runtime+context+eval on a shared module. Alternated sample by sample so machine load hits all alike,
 * the event loop turning once after each sample as a sandbox thread's does between cells.
 */
export async function measureCellStart(samples: number): Promise<CellStartReport> {
  const probe = await CellStartProbe.load();
  const bare = await QuickjsBaseline.start();
  const image: number[] = [];
  const imageWithFill: number[] = [];
  const scratch: number[] = [];
  const fresh: number[] = [];
  for (let i = 0; i < samples + 20; i += 1) {
    let t = performance.now();
    await probe.fromImage();
    const tImage = performance.now() - t;
    t = performance.now();
    await new Promise((resolve) => setImmediate(resolve));
    const tFill = performance.now() - t;
    t = performance.now();
    await probe.fromScratch();
    const tScratch = performance.now() - t;
    t = performance.now();
    await bare.evalFresh();
    const tBare = performance.now() - t;
    // A sandbox thread turns its event loop between cells (the answer goes out): what the loader
    // leaves until then (zero-filling the released Memory) is off the next start's path.
    await new Promise((resolve) => setImmediate(resolve));
    if (i < 20) continue; // warm-up
    image.push(tImage);
    imageWithFill.push(tImage + tFill);
    scratch.push(tScratch);
    fresh.push(tBare);
  }
  const row = (values: number[]): { p50: number; p99: number } => ({ p50: percentile(values, 50), p99: percentile(values, 99) });
  return {
    samples,
    imageKiB: probe.imageBytes / 1024,
    image: row(image),
    imageWithFill: row(imageWithFill),
    scratch: row(scratch),
    bare: row(fresh),
  };
}

export function cellStartTable(report: CellStartReport): string {
  const line = (name: string, r: { p50: number; p99: number }): string =>
    `| ${name} | ${fmt(r.p50, 3)} | ${fmt(r.p99, 3)} | ${fmt(r.p50 / report.bare.p50)}× |`;
  return [
    `| per cell, in-process, \`return 1+1\` (${report.samples} samples, alternating) | p50 (ms) | p99 (ms) | ÷ bare QuickJS p50 |`,
    '|---|---|---|---|',
    line(`cell start from image (new instance, ${fmt(report.imageKiB, 0)} KiB of pages copied in)`, report.image),
    line('the same + the zero-fill of its Memory, left to the next event-loop turn', report.imageWithFill),
    line('cell start from scratch (new instance, codec/console/prelude compiled)', report.scratch),
    line('bare QuickJS (new runtime + context + eval on a shared module)', report.bare),
  ].join('\n');
}

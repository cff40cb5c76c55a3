import { CellStartProbe } from '@codemode/sandbox';
import { coreGuestCatalogJson } from '@codemode/tools';
import { QuickjsBaseline } from './quickjs-baseline';
import { fmt, percentile } from './stats';

interface Row {
  p50: number;
  p99: number;
}

export interface CellStartReport {
  samples: number;
  imageKiB: number;
  /** A start as a sandbox thread makes it while its spare VM is ready: the spare taken, the cell run. */
  image: Row;
  /** The same with the catalog of a session with the core tools only: installed as the image prepared it. */
  imageWithCatalog: Row;
  /** The same with a catalog of one more tool (an MCP, tenant or client tool): parsed, the core tools' prepared handles taken. */
  imageWithOtherCatalog: Row;
  /** The next spare's preparation once the cell's answer has left, with the turn after it (any deferred zero-fill): off the start's path. */
  sparePrepare: Row;
  /** The thread's CPU per cell with a spare: the start + the next spare's preparation. */
  spareCpu: Row;
  /** A start that found no spare ready: its VM built from the image on the spot. */
  noSpare: Row;
  /** That start plus the zero-fill of its Memory the loader leaves for the next turn: the cell's whole CPU. */
  noSpareWithFill: Row;
  scratch: Row;
  bare: Row;
}

const turn = (): Promise<unknown> => new Promise((resolve) => setImmediate(resolve));

/** Milliseconds `work` takes. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await work();
  return performance.now() - t;
}

/**
 * Per cell, in-process, one tiny cell each: a VM taken the way a sandbox thread takes it (the spare
 * prepared after the previous cell, or, when none is ready, built from the prepared image on the
 * spot) vs one built from scratch (instance + runtime + codec/console/prelude compiled) vs a bare
 * QuickJS runtime+context+eval on a shared module. Alternated sample by sample so machine load hits
 * all alike, the event loop turning once after each as a sandbox thread's does between cells. The
 * image paths take turns in the first place every sample: whichever runs first after the scratch
 * build and the bare runtime finds colder caches (~0.1 ms at p50), and none should get it every time.
 * The image holds the core tools' handles prepared, as a worker's threads do, and a start from
 * scratch prepares them too.
 */
export async function measureCellStart(samples: number): Promise<CellStartReport> {
  // What a cell of a session with no MCP server, tenant or client tool gets: the core tools,
  // whose handles the worker's threads prepare in their boot image.
  const catalogJson = coreGuestCatalogJson();
  // A session with one more global (as a client tool, tenant tool or MCP server adds): the text differs.
  const parsed = JSON.parse(catalogJson) as { globals: { metadata: { callableName: string } }[] };
  const extra = { ...parsed.globals[0], metadata: { ...parsed.globals[0].metadata, callableName: 'benchExtraTool' } };
  const otherCatalogJson = JSON.stringify({ ...parsed, globals: [...parsed.globals, extra] });
  const probe = await CellStartProbe.load(catalogJson);
  const bare = await QuickjsBaseline.start();
  const spare: number[] = [];
  const withCatalog: number[] = [];
  const withOtherCatalog: number[] = [];
  const prepare: number[] = [];
  const noSpare: number[] = [];
  const fill: number[] = [];
  const scratch: number[] = [];
  const fresh: number[] = [];
  await probe.prepareSpare();
  for (let i = 0; i < samples + 20; i += 1) {
    const sample = { spare: 0, catalog: 0, otherCatalog: 0, prepare: 0, noSpare: 0, fill: 0 };
    const withSpare = async (): Promise<void> => {
      sample.spare = await timed(() => probe.fromSpare());
      // What the thread does once the answer has left: the next spare, then its event loop turns.
      sample.prepare = await timed(async () => {
        await probe.prepareSpare();
        await turn();
      });
    };
    // A start on the spare with a catalog, then the next spare (not timed: the same as above).
    const withSpareAnd = (catalog: string, into: 'catalog' | 'otherCatalog') => async (): Promise<void> => {
      sample[into] = await timed(() => probe.fromSpare(catalog));
      await probe.prepareSpare();
      await turn();
    };
    const withoutSpare = async (): Promise<void> => {
      sample.noSpare = await timed(() => probe.fromImage());
      sample.fill = await timed(turn);
    };
    const paths = [withSpare, withSpareAnd(catalogJson, 'catalog'), withSpareAnd(otherCatalogJson, 'otherCatalog'), withoutSpare];
    for (let p = 0; p < paths.length; p += 1) await paths[(i + p) % paths.length]();
    const tScratch = await timed(() => probe.fromScratch());
    const tBare = await timed(() => bare.evalFresh());
    await turn();
    if (i < 20) continue; // warm-up
    spare.push(sample.spare);
    withCatalog.push(sample.catalog);
    withOtherCatalog.push(sample.otherCatalog);
    prepare.push(sample.prepare);
    noSpare.push(sample.noSpare);
    fill.push(sample.fill);
    scratch.push(tScratch);
    fresh.push(tBare);
  }
  const row = (values: number[]): Row => ({ p50: percentile(values, 50), p99: percentile(values, 99) });
  const sum = (a: number[], b: number[]): number[] => a.map((value, index) => value + b[index]);
  return {
    samples,
    imageKiB: probe.imageBytes / 1024,
    image: row(spare),
    imageWithCatalog: row(withCatalog),
    imageWithOtherCatalog: row(withOtherCatalog),
    sparePrepare: row(prepare),
    spareCpu: row(sum(spare, prepare)),
    noSpare: row(noSpare),
    noSpareWithFill: row(sum(noSpare, fill)),
    scratch: row(scratch),
    bare: row(fresh),
  };
}

export function cellStartTable(report: CellStartReport): string {
  const line = (name: string, r: Row): string => `| ${name} | ${fmt(r.p50, 3)} | ${fmt(r.p99, 3)} | ${fmt(r.p50 / report.bare.p50)}× |`;
  return [
    `| per cell, in-process, \`return 1+1\` (${report.samples} samples, alternating) | p50 (ms) | p99 (ms) | ÷ bare QuickJS p50 |`,
    '|---|---|---|---|',
    line("cell start from image, the thread's spare VM ready (spare taken, cell run)", report.image),
    line('the same with the catalog of a session with the core tools only (installed as the image prepared it)', report.imageWithCatalog),
    line(
      "the same with a catalog of one more tool (parsed; the core tools' handles taken from the image, one built)",
      report.imageWithOtherCatalog,
    ),
    line(
      `the next spare's preparation after the answer (a recycled instance, its Memory zero-filled, ${fmt(report.imageKiB, 0)} KiB of pages copied in)`,
      report.sparePrepare,
    ),
    line('thread CPU per cell with a spare (the start + the next spare)', report.spareCpu),
    line('cell start from image, no spare ready (its VM made on the start, on a recycled instance)', report.noSpare),
    line('the same + the zero-fill of its Memory, left to the next event-loop turn', report.noSpareWithFill),
    line("cell start from scratch (new instance, codec/console/prelude compiled, the core tools' handles prepared)", report.scratch),
    line('bare QuickJS (new runtime + context + eval on a shared module)', report.bare),
  ].join('\n');
}

import { emptyTelemetry } from '@codemode/cells';
import { SPEC_DEFAULT_LIMITS, SPEC_DEFAULT_SHELL } from '@codemode/config';
import { encodeRunRequested, packEventData, splicedEventData, unpackEventData } from '@codemode/events';
import { fmt, percentile } from './stats';

/** What keeping a finished run's data packed costs the process that writes or reads it (SPEC §13). */
export interface PackingCost {
  event: string;
  bytes: number;
  packedBytes: number;
  packUs: number;
  unpackUs: number;
}

/** A trivial exec's telemetry in a session with the six OpenClaw core tools. */
const TELEMETRY = { ...emptyTelemetry(), catalogSize: 6, sources: { openclaw: 6, mcp: 0, client: 0 } };

/** The data of a trivial exec's run.requested and run.completed, as the scripts store them. */
function trivialRun(i: number): [string, string][] {
  const { head, raws } = encodeRunRequested(
    {
      title: 'add',
      code: `return ${i}+1`,
      restartSafe: false,
      awaitResults: false,
      limits: SPEC_DEFAULT_LIMITS,
      shell: SPEC_DEFAULT_SHELL,
      agentId: null,
      requestId: crypto.randomUUID(),
    },
    undefined,
  );
  const result = JSON.stringify({ status: 'completed', value: i + 1, replaySafe: false, telemetry: TELEMETRY });
  return [
    ['run.requested', splicedEventData(head, raws)],
    ['run.completed', splicedEventData('{}', [['result', result]])],
  ];
}

/** p50 µs per pack and unpack of each event's data, over `samples` runs (new data each time). */
export function measurePacking(samples: number): PackingCost[] {
  const runs = Array.from({ length: samples + 200 }, (_, i) => trivialRun(i));
  return [0, 1].map((k) => {
    const pack: number[] = [];
    const unpack: number[] = [];
    const packed: string[] = [];
    for (const [i, run] of runs.entries()) {
      let t = performance.now();
      const p = packEventData(run[k][1]) ?? run[k][1];
      const packUs = (performance.now() - t) * 1000;
      t = performance.now();
      unpackEventData(p);
      const unpackUs = (performance.now() - t) * 1000;
      packed.push(p);
      // The first 200 warm the code up.
      if (i >= 200) {
        pack.push(packUs);
        unpack.push(unpackUs);
      }
    }
    const median = (values: number[]) => percentile(values, 50);
    return {
      event: runs[0][k][0],
      bytes: median(runs.map((run) => Buffer.byteLength(run[k][1]))),
      packedBytes: median(packed.map((p) => p.length)),
      packUs: median(pack),
      unpackUs: median(unpack),
    };
  });
}

export function packingTable(costs: PackingCost[], samples: number): string {
  return [
    `| a trivial exec's event data (${samples} runs, p50) | bytes | packed bytes (base64) | pack µs | unpack µs |`,
    '|---|---|---|---|---|',
    ...costs.map((c) => `| \`${c.event}\` | ${c.bytes} | ${c.packedBytes} | ${fmt(c.packUs, 1)} | ${fmt(c.unpackUs, 1)} |`),
  ].join('\n');
}

import type { CodeModeResult } from '@codemode/contracts';
import { allEvents } from '../chaos/chaos-helpers';
import { TestStack } from '../utils/test-stack';

jest.setTimeout(180_000);

const RUNS = 150;
const TERMINAL = /^run\.(completed|failed|expired|lost)$/;

function runIdOf(result: CodeModeResult): string {
  if (result.status !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(result)}`);
  return result.runId;
}

/**
 * SPEC §3/§12: the 64 in-memory slots of a worker bound only the VMs it keeps; past them the
 * coldest parked run is evicted to its image, so one worker holds 150 parked runs, and each
 * finishes with its own closure state.
 */
describe('durable parked runs: more parked runs than in-memory slots on one worker', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ workers: 1 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it(`parks ${RUNS} runs on one worker and finishes every one`, async () => {
    const client = stack.client();
    const sid = 'many';
    const runIds: string[] = [];
    // Ten at a time, so the order of parks (and so which runs are coldest) is roughly known.
    for (let batch = 0; batch < RUNS / 10; batch += 1) {
      const parked = await Promise.all(
        Array.from({ length: 10 }, (_, j) => {
          const i = batch * 10 + j;
          return client.exec(sid, {
            title: `p${i}`,
            code: `const mine = { i: ${i}, s: "run" + ${i} }; await yield_control(); return mine;`,
          });
        }),
      );
      runIds.push(...parked.map(runIdOf));
    }
    let events = await allEvents(client, sid);
    const released = events.filter((e) => e.type === 'run.released');
    expect(released.length).toBe(RUNS - 64);
    expect(released[0].data.reason).toBe('evicted from memory to its image: the worker’s parked slots or parked memory were full');

    const results = await Promise.all(runIds.map((runId) => client.wait(sid, runId)));
    expect(results.map((r) => (r.status === 'completed' ? r.value : r))).toEqual(runIds.map((_, i) => ({ i, s: `run${i}` })));
    events = await allEvents(client, sid);
    for (const runId of runIds) {
      expect(events.filter((e) => e.runId === runId && TERMINAL.test(e.type)).map((e) => e.type)).toEqual(['run.completed']);
    }
    expect(events.filter((e) => e.type === 'run.recovered')).toHaveLength(RUNS - 64);
  });
});

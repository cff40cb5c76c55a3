import type { LegJournal } from '@codemode/contracts';
import { REPLAY_DIVERGED_PREFIX, type BridgeCall, type CellOutcome } from '@codemode/cells';
import type { BridgeHost, CellRunRequest } from '../engine/types';
import { buildReplayPlan, type RecordedToolCall } from '../replay/replay-plan';
import { SandboxPool } from './sandbox-pool';
import { cell, failure, testCatalog, valueOf, waiting } from './test-support';

/** A replay-safe `echo` tool that records every call as the worker's log would. */
function recordingHost(record: Map<string, RecordedToolCall>, made: BridgeCall[]): BridgeHost {
  return {
    async dispatch(call) {
      made.push(call);
      const { tool, input } = call.args as { tool: string; input: unknown };
      if (tool === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
      const value = { echoed: input };
      record.set(call.id, { tool, inputJson: JSON.stringify(input ?? {}), outcome: { ok: true, payload: JSON.stringify(value) } });
      return value;
    },
  };
}

const TOOLS = testCatalog(['echo', 'slow'], { replaySafe: ['echo', 'slow'] });
const SEED = [1, 2, 3, 4];

const CODE = `
  const t0 = Date.now(); const r0 = Math.random(); const d0 = new Date().getTime();
  const a = await echo({ n: 1 });
  await new Promise((r) => setTimeout(r, 5));
  const [b, c] = await Promise.all([echo({ n: 2 }), echo({ n: 3 })]);
  const s = await catalog.search("echo");
  await yield_control("one");
  const t1 = Date.now(); const r1 = Math.random();
  const e = await echo({ n: 4, t1 });
  await yield_control("two");
  const f = await echo({ n: 5 });
  return { t0, r0, d0, a, b, c, found: s.length, t1, r1, e, f };
`;

function journalOf(outcome: CellOutcome): LegJournal {
  const parked = waiting(outcome);
  if (!parked.journal) throw new TypeError('a restartSafe leg carries its journal');
  return parked.journal;
}

describe('SandboxPool: replay of restartSafe runs', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start({ threads: 2 });
  });
  afterAll(async () => {
    await pool.close();
  });

  /** Runs CODE live to its second park; returns the journals, the record and the live run's id. */
  async function recordTwoLegs(request: CellRunRequest) {
    const record = new Map<string, RecordedToolCall>();
    const made: BridgeCall[] = [];
    const host = recordingHost(record, made);
    const first = journalOf(await pool.run(request, host));
    const second = journalOf(await pool.resume(request.runId, { timeoutMs: 2000 }, host));
    return { journals: [first, second], record, made, host };
  }

  it('rebuilds a parked run exactly: same clock, random values and tool results, no call made twice', async () => {
    const live = { ...cell(CODE), catalogJson: TOOLS, restartSafe: true, seed: SEED };
    const { journals, record, made, host } = await recordTwoLegs(live);
    expect(made.map((call) => call.id)).toEqual([
      'bridge:callValue:1',
      'bridge:callValue:2',
      'bridge:callValue:3',
      'bridge:search:1',
      'bridge:callValue:4',
    ]);
    expect(journals[0].clock).toHaveLength(2);
    expect(journals[1].clock).toHaveLength(1);
    const recordAtPark = new Map(record);
    const liveValue = JSON.parse(valueOf(await pool.resume(live.runId, { timeoutMs: 2000 }, host))) as Record<string, unknown>;

    const replayMade: BridgeCall[] = [];
    const replayed = { ...cell(CODE), catalogJson: TOOLS, restartSafe: true, seed: SEED, replay: buildReplayPlan(journals, recordAtPark) };
    let replayedCalls = 0;
    const replayHost = { ...recordingHost(new Map(), replayMade), replayed: () => (replayedCalls += 1) };
    const outcome = await pool.run(replayed, replayHost);
    expect(replayedCalls).toBe(1);
    const value = JSON.parse(valueOf(outcome)) as Record<string, unknown>;
    expect(value).toEqual({ ...liveValue, f: { echoed: { n: 5 } } });
    expect(value.t0).toBe(journals[0].clock[0]);
    expect(value.t1).toBe(journals[1].clock[0]);
    // Only the call after the last park runs again on the replaying host.
    expect(replayMade.map((call) => [call.id, call.args])).toEqual([['bridge:callValue:5', { tool: 'echo', input: { n: 5 } }]]);
    expect(outcome.bridgeDispatchStarted).toBe(true);
  });

  it('fails the run naming the divergence when the code makes other calls than the log', async () => {
    const live = { ...cell(CODE), catalogJson: TOOLS, restartSafe: true, seed: SEED };
    const { journals, record } = await recordTwoLegs(live);
    pool.discard(live.runId);
    const changed = CODE.replace('echo({ n: 3 })', 'echo({ n: 33 })');
    const replayMade: BridgeCall[] = [];
    const outcome = await pool.run(
      { ...cell(changed), catalogJson: TOOLS, restartSafe: true, seed: SEED, replay: buildReplayPlan(journals, record) },
      recordingHost(new Map(), replayMade),
    );
    expect(failure(outcome)).toEqual({
      code: 'internal_error',
      phase: 'host',
      error: `${REPLAY_DIVERGED_PREFIX}: the replay called bridge:callValue:3 where the log records bridge:callValue:3 with other arguments; start a new run.`,
    });
    expect(replayMade).toEqual([]);
  });

  it('diverges when the random seed differs (the recorded run took other values)', async () => {
    const code = 'const r = Math.random(); await yield_control(); if (r < 2) await echo({ r }); await yield_control(); return r';
    const live = { ...cell(code), catalogJson: TOOLS, restartSafe: true, seed: SEED };
    const record = new Map<string, RecordedToolCall>();
    const host = recordingHost(record, []);
    const first = journalOf(await pool.run(live, host));
    const second = journalOf(await pool.resume(live.runId, { timeoutMs: 2000 }, host));
    pool.discard(live.runId);
    const plan = buildReplayPlan([first, second], record);
    const same = await pool.run(
      { ...cell(code), catalogJson: TOOLS, restartSafe: true, seed: SEED, replay: plan },
      recordingHost(new Map(), []),
    );
    const other = await pool.run(
      { ...cell(code), catalogJson: TOOLS, restartSafe: true, seed: [9, 9, 9, 9], replay: plan },
      recordingHost(new Map(), []),
    );
    expect(Number(valueOf(same))).toBeGreaterThanOrEqual(0);
    expect(failure(other).error).toMatch(
      /^code mode replay diverged from the recorded run: the replay called bridge:callValue:1 where the log records/,
    );
  });

  it('gives seeded runs the same Math.random sequence and unseeded ones their own', async () => {
    const code = 'return [Math.random(), Math.random(), Date() === new Date(Date.now()).toString() || "clock"]';
    const a = valueOf(await pool.run({ ...cell(code), restartSafe: true, seed: SEED }));
    const b = valueOf(await pool.run({ ...cell(code), restartSafe: true, seed: SEED }));
    const c = valueOf(await pool.run({ ...cell(code), restartSafe: true, seed: [5, 6, 7, 8] }));
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(JSON.parse(a)[2]).not.toBeUndefined();
  });

  it('replays the unfinished leg of a run whose worker died against its recorded results', async () => {
    const code = 'const a = await echo({ n: 1 }); const b = await echo({ n: 2 }); return [a, b]';
    const record = new Map<string, RecordedToolCall>([
      ['bridge:callValue:1', { tool: 'echo', inputJson: '{"n":1}', outcome: { ok: true, payload: '{"echoed":"from the log"}' } }],
    ]);
    const made: BridgeCall[] = [];
    const outcome = await pool.run(
      { ...cell(code), catalogJson: TOOLS, restartSafe: true, seed: SEED, replay: buildReplayPlan([], record) },
      recordingHost(new Map(), made),
    );
    expect(JSON.parse(valueOf(outcome))).toEqual([{ echoed: 'from the log' }, { echoed: { n: 2 } }]);
    expect(made.map((call) => call.id)).toEqual(['bridge:callValue:2']);
  });

  it('rebuilds a run parked on a pending timer and makes the timer again', async () => {
    const code = 'const a = await echo({ n: 1 }); await new Promise((r) => setTimeout(r, 250)); return a;';
    const record = new Map<string, RecordedToolCall>();
    const live = { ...cell(code, { timeoutMs: 100 }), catalogJson: TOOLS, restartSafe: true, seed: SEED };
    const parked = waiting(await pool.run(live, recordingHost(record, [])));
    expect(parked.reason).toBe('pending_tools');
    expect(parked.journal?.open).toEqual(['bridge:sleep:1']);
    pool.discard(live.runId);
    const made: BridgeCall[] = [];
    const replayed = {
      ...cell(code, { timeoutMs: 2000 }),
      catalogJson: TOOLS,
      restartSafe: true,
      seed: SEED,
      replay: buildReplayPlan([parked.journal!], record),
    };
    expect(JSON.parse(valueOf(await pool.run(replayed, recordingHost(new Map(), made))))).toEqual({ echoed: { n: 1 } });
    expect(made).toEqual([]);
  });

  it('answers a call that was still running when the run parked from its recorded outcome', async () => {
    const code = 'const p = slow({ n: 2 }); const a = await echo({ n: 1 }); return [a, await p];';
    const record = new Map<string, RecordedToolCall>();
    const live = { ...cell(code, { timeoutMs: 100 }), catalogJson: TOOLS, restartSafe: true, seed: SEED };
    const parked = waiting(await pool.run(live, recordingHost(record, [])));
    expect(parked.journal?.open).toEqual(['bridge:callValue:1']);
    pool.discard(live.runId);
    // The slow call finished on the old worker after the park: its outcome is in the log.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(record.get('bridge:callValue:1')?.outcome).toEqual({ ok: true, payload: '{"echoed":{"n":2}}' });
    const made: BridgeCall[] = [];
    const replayed = {
      ...cell(code, { timeoutMs: 2000 }),
      catalogJson: TOOLS,
      restartSafe: true,
      seed: SEED,
      replay: buildReplayPlan([parked.journal!], record),
    };
    expect(JSON.parse(valueOf(await pool.run(replayed, recordingHost(new Map(), made))))).toEqual([
      { echoed: { n: 1 } },
      { echoed: { n: 2 } },
    ]);
    expect(made).toEqual([]);
  });
});
